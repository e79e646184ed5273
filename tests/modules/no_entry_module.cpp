// A valid shared object that is not a dynrt module: no entry points.
extern "C" __attribute__((visibility("default"))) int tm_something_else() { return 7; }
