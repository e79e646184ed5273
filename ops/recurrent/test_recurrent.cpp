#include <gtest/gtest.h>

#include "op_test.hpp"
