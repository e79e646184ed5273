// `dynrt onnx-test` in a build without the ONNX protobuf headers.
#include <iostream>

int dynrt_onnx_test_main(int, char**) {
    std::cerr << "dynrt onnx-test: this dynrt was built without ONNX support "
                 "(install libonnx-dev and libprotobuf-dev, then reconfigure)\n";
    return 1;
}
