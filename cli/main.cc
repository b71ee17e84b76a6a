// twinccl: the command-line program; everything is in run_main.cc.
#include "commands.h"

int main(int argc, char** argv) { return twinccl::cli::run_main(argc, argv); }
