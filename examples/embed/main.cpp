// embed MODEL.onnx DATA_DIR OUT_DIR [DEVICE]: runs the model on DATA_DIR's
// input_<i>.pb (ONNX TensorProto files, one per model input in order, as in
// an ONNX test data set) and writes each output k to OUT_DIR/output_<k>.npy.
// docs/embedding.md walks through it.
#include <dynrt/dynrt.hpp>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: embed MODEL.onnx DATA_DIR OUT_DIR [DEVICE]\n";
        return 2;
    }
    const std::string data = argv[2], out = argv[3];
    try {
        dynrt::ModelOptions options;
        options.device = argc > 4 ? argv[4] : "auto";
        const dynrt::Model model(argv[1], options);
        dynrt::Request request = model.create_request();
        for (size_t i = 0; i < model.inputs().size(); ++i) {
            const dynrt::HostTensor x = dynrt::load_tensor(data + "/input_" + std::to_string(i) + ".pb");
            request.set_input(model.inputs()[i].name, x.dtype(), x.shape(), x.data());
        }
        request.run();
        for (size_t k = 0; k < model.outputs().size(); ++k) {
            const dynrt::HostTensor& y = request.output(k);   // owned by the request until its next run
            dynrt::save_npy(out + "/output_" + std::to_string(k) + ".npy", y);
            std::cout << model.outputs()[k].name << ": " << to_string(y.dtype()) << " " << y.shape().to_string()
                      << " on " << model.device() << "\n";
        }
    } catch (const dynrt::Error& e) {
        std::cerr << "embed: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
