"""A CLIP-style contrastive loss over torch.distributed.nn's all_gather (gradients flow back to
every rank's features), gradients averaged with all_reduce. CPU. Saves the loss and gradients.
Usage: torchrun --nproc-per-node N clip.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_nn
import torch.nn as nn


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    image_encoder, text_encoder = nn.Linear(10, 6), nn.Linear(12, 6)
    torch.manual_seed(10 + rank)  # each rank its own pairs
    images, texts = torch.randn(3, 10), torch.randn(3, 12)
    img = nn.functional.normalize(image_encoder(images), dim=1)
    txt = nn.functional.normalize(text_encoder(texts), dim=1)
    all_img = torch.cat(dist_nn.all_gather(img))
    all_txt = torch.cat(dist_nn.all_gather(txt))
    labels = torch.arange(rank * 3, rank * 3 + 3)
    loss = (nn.functional.cross_entropy(img @ all_txt.t() * 10.0, labels)
            + nn.functional.cross_entropy(txt @ all_img.t() * 10.0, labels)) / 2
    loss.backward()
    grads = []
    for p in list(image_encoder.parameters()) + list(text_encoder.parameters()):
        dist.all_reduce(p.grad)
        grads.append(p.grad / world)
    torch.save({"losses": loss.detach().reshape(1), "grads": grads},
               os.path.join(sys.argv[1], "clip.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
