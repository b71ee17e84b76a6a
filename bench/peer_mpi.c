/* The Open MPI half of the side-by-side table scripts/bench.sh prints (bench_peer_twinccl.cc is
 * the TwinCCL half and measures the same things the same way). Not part of the CMake build: the
 * script compiles it with mpicc when Open MPI is installed, and runs it with
 *   mpirun -np 8 --oversubscribe --mca btl self,vader ./peer_mpi
 * Prints, on rank 0, "name value" lines: all_reduce_8B_us, all_reduce_64MiB_ms,
 * reduce_scatter_64MiB_ms (64 MiB read per rank), each the slowest rank's mean time per call
 * over a round (2000 small, 3 big calls), the median of the rounds (5 small, 3 big). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kSmall = 0, kBigAllReduce = 1, kBigReduceScatter = 2 };
static const size_t kBigFloats = (64u << 20) / sizeof(float);

static void call_once(int measure, float* send, float* recv, int ranks) {
  if (measure == kBigReduceScatter) {
    MPI_Reduce_scatter_block(send, recv, (int)kBigFloats / ranks, MPI_FLOAT, MPI_SUM,
                             MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(send, recv, measure == kSmall ? 2 : (int)kBigFloats, MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
}

/* Slowest rank's mean seconds per call over `calls` calls after a warm-up and a barrier. */
static double timed_round(int measure, int calls, float* send, float* recv, int ranks) {
  for (int i = 0; i < (measure == kSmall ? 100 : 1); ++i) call_once(measure, send, recv, ranks);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) call_once(measure, send, recv, ranks);
  double mine = (MPI_Wtime() - t0) / calls, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median_of_rounds(int measure, int calls, int rounds, float* send, float* recv,
                               int ranks) {
  double v[16];
  for (int r = 0; r < rounds; ++r) v[r] = timed_round(measure, calls, send, recv, ranks);
  qsort(v, (size_t)rounds, sizeof v[0], by_value);
  return v[rounds / 2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  float* send = malloc(kBigFloats * sizeof(float));
  float* recv = malloc(kBigFloats * sizeof(float));
  if (send == NULL || recv == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  for (size_t i = 0; i < kBigFloats; ++i) send[i] = 1.0f;
  const double small_us = median_of_rounds(kSmall, 2000, 5, send, recv, ranks) * 1e6;
  const double all_reduce_ms = median_of_rounds(kBigAllReduce, 3, 3, send, recv, ranks) * 1e3;
  const double reduce_scatter_ms =
      median_of_rounds(kBigReduceScatter, 3, 3, send, recv, ranks) * 1e3;
  if (rank == 0) {
    printf("all_reduce_8B_us %.2f\n", small_us);
    printf("all_reduce_64MiB_ms %.2f\n", all_reduce_ms);
    printf("reduce_scatter_64MiB_ms %.2f\n", reduce_scatter_ms);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
