"""Training scripts in their usual torch 2.x shape on 4 emulated ranks, with TwinCCL as torch's
backend, against the same model trained in one process on the whole batch (computed here, without
any collective): DDP with a shuffling DistributedSampler, FSDP2, a CLIP-style loss over
torch.distributed.nn's all_gather, a pipeline over batch_isend_irecv."""
import copy

from torch_backend_support import close, needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

WORLD = 4


def toy_model():
    gen = torch.Generator().manual_seed(7)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model


DATA_X = torch.randn(64, 10, generator=torch.Generator().manual_seed(1))
DATA_Y = torch.randn(64, 5, generator=torch.Generator().manual_seed(2))


def reference_training(model, batches_per_step, lr, steps_loss=nn.functional.mse_loss):
    """One process, whole batch: each step averages the ranks' mean losses (what DDP and FSDP's
    gradient averaging compute)."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for batches in batches_per_step:
        opt.zero_grad()
        loss = sum(steps_loss(model(DATA_X[i]), DATA_Y[i]) for i in batches) / len(batches)
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def test_ddp_tutorial_with_shuffling_sampler_matches_one_process():
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    def script(rank):
        dist.init_process_group("gloo")
        model = toy_model()
        ddp_model = DDP(model)
        sampler = DistributedSampler(TensorDataset(DATA_X, DATA_Y), shuffle=True, seed=3)
        loader = DataLoader(TensorDataset(DATA_X, DATA_Y), batch_size=4, sampler=sampler)
        opt = torch.optim.SGD(ddp_model.parameters(), lr=0.05)
        for epoch in range(2):
            sampler.set_epoch(epoch)
            for x, y in loader:
                opt.zero_grad()
                nn.functional.mse_loss(ddp_model(x), y).backward()
                opt.step()
        dist.destroy_process_group()
        return [p.detach().clone() for p in model.parameters()], list(sampler_indices(rank))

    def sampler_indices(rank):
        for epoch in range(2):
            s = DistributedSampler(range(64), num_replicas=WORLD, rank=rank, shuffle=True, seed=3)
            s.set_epoch(epoch)
            yield list(s)

    results = run_script(script)
    # Step k of every rank takes its sampler's k-th slice of 4 indices.
    batches = []
    for epoch in range(2):
        per_rank = [results[r][1][epoch] for r in range(WORLD)]
        for k in range(0, 16, 4):
            batches.append([torch.tensor(per_rank[r][k:k + 4]) for r in range(WORLD)])
    expected = reference_training(toy_model(), batches, lr=0.05)
    for r in range(WORLD):
        assert close(results[r][0], expected), "rank %d's weights differ" % r
    assert not close(results[0][0], [p.detach() for p in toy_model().parameters()])  # it trained


@needs_torch2
def test_fsdp2_training_loop_matches_one_process():
    from torch.distributed.fsdp import fully_shard

    def script(rank):
        model = toy_model()
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            rows = torch.arange(step * 16 + rank * 4, step * 16 + rank * 4 + 4)
            opt.zero_grad()
            nn.functional.mse_loss(model(DATA_X[rows]), DATA_Y[rows]).backward()
            opt.step()
        return [p.full_tensor().detach().clone() for p in model.parameters()]

    results, report = run_script(script, topology="dgx-h100")
    batches = [[torch.arange(s * 16 + r * 4, s * 16 + r * 4 + 4) for r in range(WORLD)]
               for s in range(3)]
    expected = reference_training(toy_model(), batches, lr=0.1)
    for r in range(WORLD):
        assert close(results[r], expected), "rank %d's weights differ" % r
    # FSDP2's all-gathers and reduce-scatters were traced and timed on the topology.
    kinds = {op["kind"] for op in report.ops}
    assert {"all_gather", "reduce_scatter"} <= kinds and report.total_us > 0


def clip_loss(image_features, text_features, first, count):
    """CLIP's symmetric cross-entropy for rows first..first+count of the gathered batch."""
    logits = image_features[first:first + count] @ text_features.t() * 10.0
    labels = torch.arange(first, first + count)
    logits_t = text_features[first:first + count] @ image_features.t() * 10.0
    return (nn.functional.cross_entropy(logits, labels)
            + nn.functional.cross_entropy(logits_t, labels)) / 2


def test_clip_loss_over_distributed_nn_all_gather_matches_one_process():
    import torch.distributed.nn.functional as dist_nn

    encoder = nn.Linear(10, 6)
    with torch.no_grad():
        encoder.weight.copy_(torch.randn(6, 10, generator=torch.Generator().manual_seed(5)))
        encoder.bias.zero_()

    def script(rank):
        enc = copy.deepcopy(encoder)
        rows = torch.arange(rank * 4, rank * 4 + 4)
        img = nn.functional.normalize(enc(DATA_X[rows]), dim=1)
        txt = nn.functional.normalize(enc(DATA_X[rows + 32]), dim=1)
        all_img = torch.cat(dist_nn.all_gather(img))
        all_txt = torch.cat(dist_nn.all_gather(txt))
        clip_loss(all_img, all_txt, rank * 4, 4).backward()
        for p in enc.parameters():
            dist.all_reduce(p.grad)
        return [p.grad.clone() for p in enc.parameters()]

    results = run_script(script)
    ref = copy.deepcopy(encoder)
    img = nn.functional.normalize(ref(DATA_X[:16]), dim=1)
    txt = nn.functional.normalize(ref(DATA_X[32:48]), dim=1)
    sum(clip_loss(img, txt, r * 4, 4) for r in range(WORLD)).backward()
    expected = [p.grad for p in ref.parameters()]
    for r in range(WORLD):
        assert close(results[r], expected), "rank %d's gradients differ" % r


def test_pipeline_over_batch_isend_irecv_matches_one_process():
    stages = [nn.Linear(10, 10) for _ in range(WORLD)]
    gen = torch.Generator().manual_seed(9)
    with torch.no_grad():
        for s in stages:
            s.weight.copy_(torch.randn(10, 10, generator=gen) * 0.4)
            s.bias.copy_(torch.randn(10, generator=gen) * 0.1)
    micro = [DATA_X[m * 4:m * 4 + 4] for m in range(3)]

    def script(rank):
        stage = copy.deepcopy(stages[rank])
        prev, nxt = rank - 1, rank + 1
        saved = []
        for x in micro:  # forward, GPipe order: every micro-batch through every stage
            if rank > 0:
                x = torch.empty(4, 10)
                for w in dist.batch_isend_irecv([dist.P2POp(dist.irecv, x, prev)]):
                    w.wait()
            x.requires_grad_(rank > 0)
            y = torch.tanh(stage(x))
            saved.append((x, y))
            if nxt < WORLD:
                for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, y.detach(), nxt)]):
                    w.wait()
        for x, y in reversed(saved):  # backward
            if nxt < WORLD:
                grad = torch.empty(4, 10)
                for w in dist.batch_isend_irecv([dist.P2POp(dist.irecv, grad, nxt)]):
                    w.wait()
                y.backward(grad)
            else:
                y.pow(2).sum().backward()
            if rank > 0:
                for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, x.grad, prev)]):
                    w.wait()
        return [p.grad.clone() for p in stage.parameters()]

    results = run_script(script)
    ref = [copy.deepcopy(s) for s in stages]
    for x in micro:
        for s in ref:
            x = torch.tanh(s(x))
        x.pow(2).sum().backward()
    for r in range(WORLD):
        assert close(results[r], [p.grad for p in ref[r].parameters()]), "stage %d differs" % r


def test_example_torch_ddp_runs(capsys):
    """examples/python/torch_ddp.py's script, in this process (torch is imported already)."""
    import importlib.util
    import os

    from conftest import source_dir

    import twinccl

    path = os.path.join(source_dir(), "examples", "python", "torch_ddp.py")
    spec = importlib.util.spec_from_file_location("torch_ddp_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    report = twinccl.run(example.train, world_size=4, torch_distributed=True, topology="dgx-h100")
    assert "epoch 1: loss" in capsys.readouterr().out
    assert any(op["kind"] == "all_reduce" for op in report.ops)


def test_synchronous_sgd_tutorial_with_per_rank_seeds_and_shuffling_loaders():
    """torch's "Writing Distributed Applications" tutorial shape: every rank seeds torch, builds
    Net(), shuffles its partition with a DataLoader and averages gradients with all_reduce. Each
    rank's generator is its own (the rank baton), so the run is what torchrun gives: here
    replayed in one process, rank by rank, from the same seeds."""
    import random

    from torch.utils.data import DataLoader, TensorDataset

    def partition(rank):
        indices = list(range(64))
        random.Random(1234).shuffle(indices)
        return TensorDataset(DATA_X[indices[rank * 16:rank * 16 + 16]],
                             DATA_Y[indices[rank * 16:rank * 16 + 16]])

    def net_and_batches(rank):
        torch.manual_seed(1234)
        model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
        loader = DataLoader(partition(rank), batch_size=4, shuffle=True)
        return model, loader

    def script(rank):
        model, loader = net_and_batches(rank)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for epoch in range(2):
            for x, y in loader:
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                for p in model.parameters():  # the tutorial's average_gradients
                    dist.all_reduce(p.grad.data, op=dist.ReduceOp.SUM)
                    p.grad.data /= float(dist.get_world_size())
                opt.step()
        return [p.detach().clone() for p in model.parameters()]

    results = run_script(script)
    with torch.random.fork_rng():
        per_rank = []
        for rank in range(WORLD):
            model, loader = net_and_batches(rank)
            per_rank.append([b for _ in range(2) for b in loader])
        reference = model
    opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    for step in range(len(per_rank[0])):
        opt.zero_grad()
        sum(nn.functional.mse_loss(reference(per_rank[r][step][0]), per_rank[r][step][1])
            for r in range(WORLD)).div(WORLD).backward()
        opt.step()
    expected = [p.detach() for p in reference.parameters()]
    for r in range(WORLD):
        assert close(results[r], expected), "rank %d's weights differ" % r
