// The emulator's backend entry, under the name this header had before the emulator moved to emu/
// (its communicator is emu/src/communicator.h now). New code includes "emu/launch.h".
#pragma once

#include "emu/launch.h"
