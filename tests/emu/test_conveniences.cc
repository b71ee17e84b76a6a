// torch.distributed, MindSpore comm_func and torch.cuda.comm.scatter shapes over the core API.
#include <catch2/catch.hpp>
#include <mutex>
#include <numeric>

#include "support/harness.h"
#include "twinccl/chunk_scatter.h"
#include "twinccl/errors.h"
#include "twinccl/mindspore_style.h"
#include "twinccl/torch_style.h"

using namespace twinccl;
using namespace twinccl::testing;
namespace td = twinccl::torch_style;
namespace ms = twinccl::mindspore_style;

TEST_CASE("torch style: all_gather into a list with uneven sizes, async handle", "[emu][torch]") {
  int n = GENERATE(1, 3, 4);
  std::vector<std::vector<float>> got(static_cast<std::size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    Buffer mine = world.alloc(static_cast<std::size_t>(world.rank() + 1), DataType::float32);
    for (float& v : mine.host_span<float>()) v = static_cast<float>(world.rank());
    std::vector<Buffer> parts;
    for (int r = 0; r < n; ++r)
      parts.push_back(world.alloc(static_cast<std::size_t>(r + 1), DataType::float32));
    std::optional<Work> w = td::all_gather(world, parts, mine, /*async_op=*/true);
    if (!w) throw std::runtime_error("async_op=true must return a handle");
    w->wait();
    auto& out = got[static_cast<std::size_t>(world.rank())];
    for (const Buffer& p : parts) {
      auto v = p.to_host<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    Buffer one = world.alloc(1, DataType::float32);
    if (td::all_reduce(world, one)) throw std::runtime_error("async_op=false must return nothing");
  });
  std::vector<float> want;
  for (int r = 0; r < n; ++r)
    want.insert(want.end(), static_cast<std::size_t>(r + 1), static_cast<float>(r));
  for (const auto& g : got) CHECK(g == want);
}

TEST_CASE("torch style: reduce_scatter from a list, all_to_all lists, batch_isend_irecv",
          "[emu][torch]") {
  constexpr int n = 4;
  std::vector<int> rs(n), a2a(n * n), ring(n);
  run_ranks(n, [&](Communicator& world) {
    int me = world.rank();
    std::vector<Buffer> inputs;
    for (int r = 0; r < n; ++r) {
      Buffer b = world.alloc(2, DataType::int32);
      for (int& v : b.host_span<int>()) v = me * 10 + r;  // rank me's contribution to rank r
      inputs.push_back(b);
    }
    Buffer out = world.alloc(2, DataType::int32);
    td::reduce_scatter(world, out, inputs);
    rs[static_cast<std::size_t>(me)] = out.host_span<int>()[1];
    std::vector<Buffer> outs;
    for (int r = 0; r < n; ++r) outs.push_back(world.alloc(2, DataType::int32));
    td::all_to_all(world, outs, inputs);
    for (int r = 0; r < n; ++r)
      a2a[static_cast<std::size_t>(me * n + r)] =
          outs[static_cast<std::size_t>(r)].host_span<int>()[0];
    Buffer s = world.alloc(1, DataType::int32), t = world.alloc(1, DataType::int32);
    s.host_span<int>()[0] = me;
    std::vector<td::P2POp> ops{{td::P2POp::Kind::isend, s, (me + 1) % n},
                               {td::P2POp::Kind::irecv, t, (me + n - 1) % n}};
    td::batch_isend_irecv(world, ops)->wait();
    ring[static_cast<std::size_t>(me)] = t.host_span<int>()[0];
  });
  for (int r = 0; r < n; ++r) {
    CHECK(rs[static_cast<std::size_t>(r)] == (0 + 10 + 20 + 30) + n * r);
    CHECK(ring[static_cast<std::size_t>(r)] == (r + n - 1) % n);
    for (int q = 0; q < n; ++q) CHECK(a2a[static_cast<std::size_t>(r * n + q)] == q * 10 + r);
  }
}

TEST_CASE("mindspore style: stacked output tensor with a handle", "[emu][mindspore]") {
  constexpr int n = 4;
  std::vector<std::vector<double>> gathered(n), scattered(n);
  run_ranks(n, [&](Communicator& world) {
    Buffer x = world.alloc(3, DataType::float64);
    for (double& v : x.host_span<double>()) v = world.rank() + 0.5;
    auto [stacked, handle] = ms::all_gather_into_tensor(x, world, /*async_op=*/true);
    handle.wait();
    gathered[static_cast<std::size_t>(world.rank())] = stacked.to_host<double>();
    Buffer g = world.alloc(8, DataType::float64);
    for (double& v : g.host_span<double>()) v = 1.0;
    auto [part, h2] = ms::reduce_scatter_tensor(g, ReduceOp::sum(), world);
    scattered[static_cast<std::size_t>(world.rank())] = part.to_host<double>();
  });
  for (int r = 0; r < n; ++r) {
    REQUIRE(gathered[static_cast<std::size_t>(r)].size() == 12);
    for (std::size_t i = 0; i < 12; ++i)
      CHECK(gathered[static_cast<std::size_t>(r)][i] == static_cast<double>(i / 3) + 0.5);
    CHECK(scattered[static_cast<std::size_t>(r)] == std::vector<double>{4.0, 4.0});
  }
}

TEST_CASE("mindspore style: rooted calls with placeholders off the root, recv",
          "[emu][mindspore]") {
  const int n = GENERATE(1, 3, 4);
  std::vector<std::vector<int>> reduced(static_cast<std::size_t>(n)),
      gathered(static_cast<std::size_t>(n)), shares(static_cast<std::size_t>(n)),
      copies(static_cast<std::size_t>(n)), received(static_cast<std::size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    const auto me = static_cast<std::size_t>(world.rank());
    const int root = n - 1;
    Buffer x = world.alloc(2, DataType::int32);
    for (int& v : x.host_span<int>()) v = world.rank() + 1;
    auto [sum, h1] = ms::reduce(x, root, ReduceOp::sum(), world, /*async_op=*/true);
    h1.wait();
    reduced[me] = world.rank() == root ? sum.to_host<int>() : std::vector<int>(sum.count());
    gathered[me] = ms::gather_into_tensor(x, 0, world).output.to_host<int>();
    Buffer full = world.alloc(static_cast<std::size_t>(2 * n), DataType::int32);
    auto s = full.host_span<int>();
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = world.rank() == 0 ? static_cast<int>(i) : -1;
    shares[me] = ms::scatter_tensor(full, 0, world).output.to_host<int>();
    copies[me] = ms::broadcast(x, root, world).output.to_host<int>();
    if (n > 1 && world.rank() == 0) world.send(x, 1);
    if (n > 1 && world.rank() == 1)
      received[me] = ms::recv(2, DataType::int32, 0, world).output.to_host<int>();
  });
  const int total = n * (n + 1) / 2;
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    CHECK(reduced[i] == (r == n - 1 ? std::vector<int>{total, total} : std::vector<int>{0}));
    CHECK(gathered[i].size() == (r == 0 ? static_cast<std::size_t>(2 * n) : 1));
    if (r == 0)
      for (int k = 0; k < 2 * n; ++k) CHECK(gathered[i][static_cast<std::size_t>(k)] == k / 2 + 1);
    CHECK(shares[i] == std::vector<int>{2 * r, 2 * r + 1});
    CHECK(copies[i] == std::vector<int>{n, n});
  }
  if (n > 1) CHECK(received[1] == std::vector<int>{1, 1});
}

TEST_CASE("scatter_chunks: uneven chunks along dim 0 and dim 1, like torch.cuda.comm.scatter",
          "[emu][chunks]") {
  constexpr int n = 3;
  const std::vector<std::size_t> shape{4, 5};  // 4 rows x 5 columns, value = row*10 + col
  std::vector<std::vector<int>> by_rows(n), by_cols(n), even(n);
  run_ranks(n, [&](Communicator& world) {
    Buffer t;
    if (world.rank() == 1) {
      t = world.alloc(20, DataType::int32);
      auto s = t.host_span<int>();
      for (int i = 0; i < 20; ++i) s[static_cast<std::size_t>(i)] = (i / 5) * 10 + i % 5;
    }
    std::vector<std::size_t> rows{1, 0, 3}, cols{2, 2, 1};
    by_rows[static_cast<std::size_t>(world.rank())] =
        scatter_chunks(world, t, DataType::int32, shape, rows, 0, 1).to_host<int>();
    by_cols[static_cast<std::size_t>(world.rank())] =
        scatter_chunks(world, t, DataType::int32, shape, cols, 1, 1).to_host<int>();
    even[static_cast<std::size_t>(world.rank())] =
        scatter_chunks(world, t, DataType::int32, shape, {}, 1, 1).to_host<int>();
  });
  CHECK(by_rows[0] == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(by_rows[1].empty());
  CHECK(by_rows[2] == std::vector<int>{10, 11, 12, 13, 14, 20, 21, 22, 23, 24, 30, 31, 32, 33, 34});
  CHECK(by_cols[0] == std::vector<int>{0, 1, 10, 11, 20, 21, 30, 31});
  CHECK(by_cols[1] == std::vector<int>{2, 3, 12, 13, 22, 23, 32, 33});
  CHECK(by_cols[2] == std::vector<int>{4, 14, 24, 34});
  CHECK(even[0] == by_cols[0]);  // torch.chunk sizes for 5 over 3: 2, 2, 1
  CHECK(even_chunk_sizes(5, 3) == std::vector<std::size_t>{2, 2, 1});
  CHECK(chunk_shape(shape, std::vector<std::size_t>{2, 2, 1}, 1, 2) ==
        std::vector<std::size_t>{4, 1});
}

TEST_CASE("scatter_chunks refuses chunk sizes that do not add up", "[emu][chunks]") {
  std::string msg;
  try {
    run_ranks(2, [](Communicator& world) {
      Buffer t = world.alloc(6, DataType::float32);
      std::vector<std::size_t> shape{6}, chunks{2, 3};
      scatter_chunks(world, t, DataType::float32, shape, chunks, 0, 0);
    });
  } catch (const InvalidArgument& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Matchers::Contains("chunk_sizes sum to 5 but shape[0] is 6"));
}
