// Boost.Asio for the store, with the warnings its 1.74 headers raise under GCC 12 silenced
// (flow-based warnings fire after inlining even though Boost lives in a system directory).
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including <utility>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/asio.hpp>
#pragma GCC diagnostic pop
