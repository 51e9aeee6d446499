"""The torch network of ``bench/llama_policy.py``'s 7B stand-in: a Llama backbone between patch embeddings and
an action head, with OpenVLA-OFT's token layout (image patches, one proprio token, the prompt, the action
queries). Imported only when a policy is built, so ``bench.llama_policy`` loads without torch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from eval_runner.api import ACTION_DIM

VOCAB = 32000
SIGLIP_WIDTH = 1152  # the patch embedding's width, SigLIP's
#: what ``describe()`` calls each backbone
BACKBONE_CONFIGS = {
    "hf": "LlamaConfig",
    "lean": "LeanLlama (bench/lean_llama.py)",
    "lean-compiled": "LeanLlama (bench/lean_llama.py) through torch.compile",
}


def make_backbone(
    backbone: str, *, hidden: int, intermediate: int, layers: int, heads: int, tokens_per_row: int, device: str
) -> nn.Module:
    """The Llama network, as transformers' ``LlamaModel`` (``hf``) or :class:`bench.lean_llama.LeanLlama`."""
    if backbone.startswith("lean"):
        from bench.lean_llama import LeanLlama

        lean = LeanLlama(vocab=VOCAB, hidden=hidden, intermediate=intermediate, layers=layers, heads=heads)
        if backbone == "lean":
            return lean
        # The rotary tables are built now: filled inside the compiled forward, their cache would make
        # the first graph valid only while it is empty, and a later batch size would compile again. They
        # are keyed by the device the inputs will report: "cuda" names no index, but a CUDA tensor's device
        # is "cuda:0". Built under "cuda", the forward added a second table, the cache's new length failed
        # the first graph's guard, and the first multi-row request after serving compiled again (~20 s,
        # inside the H200 suite runs of 2026-12-05).
        lean.rope(tokens_per_row, torch.empty(0, device=device).device, torch.bfloat16)
        # dynamic: one compiled graph for every batch size (Dynamo keeps batch 1 as a second one). The
        # compiled module hands attribute reads (embed_tokens, parameters) to the one it wraps.
        compiled: nn.Module = torch.compile(lean, dynamic=True)  # type: ignore[assignment]
        return compiled
    from transformers import LlamaConfig, LlamaModel

    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=4096,
    )
    config._attn_implementation = "sdpa"
    model: nn.Module = LlamaModel(config)
    return model


class StandInVLA(nn.Module):
    """Images, proprio and prompt in; ``[B, chunk, 7]`` actions out, from one pass of the backbone."""

    def __init__(
        self,
        backbone: str,
        *,
        hidden: int,
        patch: int,
        chunk: int,
        prompt_tokens: int,
        proprio_dim: int,
        device: str,
        **shape: int,
    ) -> None:
        super().__init__()
        self.backbone_name = backbone
        self.shape = {"hidden": hidden, **shape}  # layers, intermediate, heads, tokens_per_row
        self.backbone = make_backbone(backbone, hidden=hidden, device=device, **shape)
        self.patch = nn.Conv2d(3, SIGLIP_WIDTH, kernel_size=patch, stride=patch)
        self.projector = nn.Sequential(nn.Linear(SIGLIP_WIDTH, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.proprio = nn.Sequential(nn.Linear(proprio_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.action_queries = nn.Parameter(torch.randn(chunk * ACTION_DIM, hidden) * 0.02)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))
        self.prompt_tokens = prompt_tokens
        self.vocab = VOCAB
        self.chunk = chunk

    def forward(self, images: torch.Tensor, proprio: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        b = images.shape[0]
        x = images.flatten(0, 1).permute(0, 3, 1, 2).to(torch.bfloat16) / 255.0  # [B*cams, 3, H, W]
        patches = self.projector(self.patch(x).flatten(2).transpose(1, 2))  # [B*cams, P, hidden]
        patches = patches.reshape(b, -1, patches.shape[-1])
        parts = [
            patches,
            self.proprio(proprio.to(torch.bfloat16)).unsqueeze(1),
            self.backbone.embed_tokens(tokens),
            self.action_queries.unsqueeze(0).expand(b, -1, -1),
        ]
        embeds = torch.cat(parts, dim=1)
        if self.backbone_name.startswith("lean"):
            hidden_states = self.backbone(embeds)
        else:  # no KV cache: one pass per chunk, and a graph capture must not keep Python-side cache objects
            hidden_states = self.backbone(inputs_embeds=embeds, use_cache=False).last_hidden_state
        actions = self.head(hidden_states[:, -self.chunk * ACTION_DIM :])  # [B, chunk*7, 1]
        return actions.reshape(b, self.chunk, ACTION_DIM)

    def describe(self) -> dict[str, Any]:
        return {
            "config": BACKBONE_CONFIGS[self.backbone_name],
            **{k: self.shape[k] for k in ("layers", "hidden", "intermediate", "heads")},
            "parameters": sum(p.numel() for p in self.parameters()),
            "dtype": "bfloat16",
            "tokens_per_row": self.shape["tokens_per_row"],
        }
