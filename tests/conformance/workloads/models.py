"""Tiny, randomly initialised models of the families users train, written out by hand.

Why by hand rather than with ``transformers``: the workloads group runs in every cell
(Python 3.8-3.13 x torch 2.1-2.15). Current ``transformers`` supports neither Python 3.8
nor torch 2.1, its import costs seconds, and per-Python pins would test different model
code in different cells. These follow the Hugging Face layouts that matter to a device:
GPT-2 (pre-LayerNorm blocks, tanh-GELU MLP, fused qkv projection, causal SDPA, learned
positions, ``lm_head`` tied to the token embedding) and BERT (post-LayerNorm encoder,
token-type and position embeddings, padding mask). Dropout is off: on an accelerator
PyTorch takes the fused ``native_dropout`` path while CPU takes ``dropout``'s composite
one, so the masks agree but the scaling rounds differently (see docs/shims.md).
"""

from __future__ import annotations

from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["GPT2", "Bert", "RecurrentLM", "ConvNet", "greedy_generate"]


def _sdpa(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Optional[torch.Tensor], causal: bool
) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)


class _Attention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = _sdpa(q, k, v, mask, causal)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class _GPT2Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = _Attention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), causal=True)
        return x + self.out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """A GPT-2 language model whose ``lm_head`` shares its weight with ``wte``."""

    def __init__(self, vocab: int = 96, positions: int = 32, width: int = 32, layers: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(positions, width)
        self.blocks = nn.ModuleList(_GPT2Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2
        self.apply(self._init)

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))

    def loss(self, ids: torch.Tensor) -> torch.Tensor:
        logits = self(ids)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


@torch.no_grad()
def greedy_generate(model: GPT2, prompt: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy decoding (argmax each step), like ``generate(do_sample=False)``."""
    ids = prompt
    for _ in range(new_tokens):
        next_id = model(ids)[:, -1].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids


class _BertLayer(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.attn = _Attention(width, heads)
        self.ln_attn = nn.LayerNorm(width, eps=1e-12)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)
        self.ln_out = nn.LayerNorm(width, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.ln_attn(x + self.attn(x, mask=mask))
        return self.ln_out(x + self.out(F.gelu(self.fc(x))))


class Bert(nn.Module):
    """A BERT encoder with a pooler; ``attention_mask`` 1 marks real tokens, 0 padding."""

    def __init__(self, vocab: int = 96, positions: int = 32, width: int = 32, layers: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, width, padding_idx=0)
        self.position = nn.Embedding(positions, width)
        self.token_type = nn.Embedding(2, width)
        self.ln = nn.LayerNorm(width, eps=1e-12)
        self.layers = nn.ModuleList(_BertLayer(width, heads) for _ in range(layers))
        self.pooler = nn.Linear(width, width)

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor, token_types: torch.Tensor) -> List[torch.Tensor]:
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.ln(self.word(ids) + self.position(positions) + self.token_type(token_types))
        # (batch, 1, 1, keys): large negative on padded keys, as BERT's extended mask
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return [x, torch.tanh(self.pooler(x[:, 0]))]


class RecurrentLM(nn.Module):
    """An embedding, a two-layer LSTM or GRU and a linear decoder."""

    def __init__(self, kind: str, vocab: int = 64, width: int = 32, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn(width, width, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(width, vocab)

    def loss(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(ids[:, :-1]))
        logits = self.decoder(out)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


class ConvNet(nn.Module):
    """Conv-BatchNorm-ReLU twice, pooling and a classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))
