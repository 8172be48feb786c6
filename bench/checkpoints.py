"""Random-weight checkpoints the size of BERT-base and GPT-2 (12 layers x 12 heads, d = 768), built on this
machine with transformers' config classes (a dev requirement) and tokenizers this project already has: no
download. How fast a model runs and how much its views weigh do not depend on what its weights learned.

    python -m bench.checkpoints /tmp/models      # writes /tmp/models/bert-base and /tmp/models/gpt2
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from model import pretrained
from model.api import ASSETS

SEED = 0


def bert_base(folder: Path) -> Path:
    """BERT-base's shape (12 x 12, d = 768, 512 positions) with minilm's WordPiece tokenizer (BERT's own
    uncased vocabulary of 30,522 pieces)."""
    import torch
    import transformers as t

    torch.manual_seed(SEED)
    model = t.BertModel(t.BertConfig(), add_pooling_layer=False)  # the defaults are bert-base-uncased's
    return _save(model, folder, pretrained.minilm_folder() / "tokenizer.json")


def gpt2(folder: Path) -> Path:
    """GPT-2's shape (12 x 12, d = 768, 1,024 positions, 50,257 tokens) with this project's byte-level BPE
    tokenizer (4,096 pieces: every id it writes is one GPT-2 has)."""
    import torch
    import transformers as t

    torch.manual_seed(SEED)
    model = t.GPT2LMHeadModel(t.GPT2Config())  # the defaults are gpt2's (124 M parameters)
    return _save(model, folder, ASSETS / "tokenizer.json")


def _save(model, folder: Path, tokenizer: Path) -> Path:
    folder = Path(folder)
    if not (folder / "model.safetensors").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        model.eval().save_pretrained(folder, safe_serialization=True)
        shutil.copy(tokenizer, folder / "tokenizer.json")
    return folder


def build(root: Path) -> dict[str, Path]:
    """Both checkpoints under `root` (kept: a second run reuses them), name -> folder."""
    root = Path(root)
    return {"bert-base": bert_base(root / "bert-base"), "gpt2": gpt2(root / "gpt2")}


if __name__ == "__main__":
    for name, folder in build(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/bench-models")).items():
        print(name, folder)
