"""Llama-2's decoder written the way serving stacks run it: fused projections, fused norm, flash attention.

The same network as transformers' ``LlamaModel`` (pre-norm RMSNorm, rotary position embedding, causal
self-attention, SwiGLU MLP, final norm), with the same parameters and FLOPs, computed with fewer and
larger kernels:

- the Q, K and V projections are one matrix product (``[hidden, 3 * hidden]``), and the MLP's gate and
  up projections another (``[hidden, 2 * intermediate]``), as vLLM and TensorRT-LLM lay them out;
- each residual add rides on the matrix product that feeds it (``addmm``: the product's epilogue adds it);
- RMSNorm is PyTorch's fused ``rms_norm``, attention is ``scaled_dot_product_attention`` (flash) with
  ``is_causal``, and the rotary tables are built once per sequence length.

:func:`load_from_hf` copies a transformers ``LlamaModel``'s weights in, which is how the tests check that
both compute the same function (``tests/unit/bench/test_lean_llama.py``). Used by
``bench/llama_policy.py`` with ``backbone=lean``.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


class LeanLlamaLayer(nn.Module):
    """One decoder layer: ``x + attn(norm(x))``, then ``x + mlp(norm(x))``."""

    def __init__(self, hidden: int, intermediate: int, heads: int, eps: float) -> None:
        super().__init__()
        self.heads, self.eps = heads, eps
        self.input_norm = nn.Parameter(torch.ones(hidden))
        self.post_attention_norm = nn.Parameter(torch.ones(hidden))
        # stored [in, out] so that addmm(residual, x, weight) needs no transpose at run time
        self.qkv = nn.Parameter(torch.empty(hidden, 3 * hidden))
        self.o = nn.Parameter(torch.empty(hidden, hidden))
        self.gate_up = nn.Parameter(torch.empty(hidden, 2 * intermediate))
        self.down = nn.Parameter(torch.empty(intermediate, hidden))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """``x``: ``[tokens, hidden]`` of ``batch`` sequences of ``cos.shape[0]`` tokens each."""
        tokens, hidden = x.shape
        seq = cos.shape[0]
        head_dim = hidden // self.heads
        h = F.rms_norm(x, (hidden,), self.input_norm, self.eps)
        q, k, v = (h @ self.qkv).view(-1, seq, 3, self.heads, head_dim).unbind(2)  # [batch, seq, heads, head_dim]
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        attn = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = torch.addmm(x, attn.transpose(1, 2).reshape(tokens, hidden), self.o)
        gate, up = (F.rms_norm(x, (hidden,), self.post_attention_norm, self.eps) @ self.gate_up).chunk(2, dim=-1)
        return torch.addmm(x, F.silu(gate) * up, self.down)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Llama's rotary embedding (the half-split convention of transformers' ``rotate_half``)."""
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-second, first), dim=-1) * sin


class LeanLlama(nn.Module):
    """A stack of :class:`LeanLlamaLayer` with token embeddings and the final norm (``LlamaModel``'s role)."""

    def __init__(
        self,
        *,
        vocab: int,
        hidden: int,
        intermediate: int,
        layers: int,
        heads: int,
        eps: float = 1e-6,
        rope_theta: float = 10000.0,
    ) -> None:
        super().__init__()
        self.hidden, self.heads, self.eps, self.rope_theta = hidden, heads, eps, rope_theta
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(LeanLlamaLayer(hidden, intermediate, heads, eps) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(hidden))
        for layer in self.layers:
            for weight in (layer.qkv, layer.o, layer.gate_up, layer.down):
                nn.init.normal_(weight, std=0.02)  # LlamaConfig's initializer_range
        self._rope: dict[tuple[int, torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor]] = {}

    def rope(self, seq: int, device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin ``[seq, 1, head_dim]`` for positions 0..seq-1, computed in float32, kept per length."""
        key = (seq, device, dtype)
        if key not in self._rope:
            head_dim = self.hidden // self.heads
            inv_freq = 1.0 / self.rope_theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim)
            freqs = torch.outer(torch.arange(seq, device=device).float(), inv_freq)
            angles = torch.cat((freqs, freqs), dim=-1)[:, None, :]
            self._rope[key] = (angles.cos().to(dtype), angles.sin().to(dtype))
        return self._rope[key]

    def forward(self, inputs_embeds: torch.Tensor) -> torch.Tensor:
        """``[batch, seq, hidden]`` embeddings -> the last layer's normed hidden states, same shape."""
        batch, seq, hidden = inputs_embeds.shape
        cos, sin = self.rope(seq, inputs_embeds.device, inputs_embeds.dtype)
        x = inputs_embeds.reshape(batch * seq, hidden)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return F.rms_norm(x, (hidden,), self.norm, self.eps).view(batch, seq, hidden)


def load_from_hf(lean: LeanLlama, hf: Any) -> None:
    """Copy a transformers ``LlamaModel``'s weights into ``lean`` (same shapes; used to check equivalence)."""
    with torch.no_grad():
        lean.embed_tokens.weight.copy_(hf.embed_tokens.weight)
        lean.norm.copy_(hf.norm.weight)
        for mine, theirs in zip(lean.layers, hf.layers, strict=True):
            attn, mlp = theirs.self_attn, theirs.mlp
            mine.input_norm.copy_(theirs.input_layernorm.weight)
            mine.post_attention_norm.copy_(theirs.post_attention_layernorm.weight)
            mine.qkv.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]).T)
            mine.o.copy_(attn.o_proj.weight.T)
            mine.gate_up.copy_(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]).T)
            mine.down.copy_(mlp.down_proj.weight.T)
