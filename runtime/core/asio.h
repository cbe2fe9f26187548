#pragma once

// Boost 1.74's Asio in C++20 mode with g++ 12 needs <utility> before any Asio header
// ("'exchange' is not a member of 'std'" in awaitable.hpp). Include Asio only through this header.
#include <utility>

#include <boost/asio.hpp>
