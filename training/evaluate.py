"""Measure a shipped model: `python -m training.evaluate lm|mlm|dates|classifier [--data FILE] [--write]`.

Prints JSON. lm: validation perplexity beside a unigram baseline, and the head that
attends most to the previous token, the induction head (random words repeated: weight on the
word after the earlier occurrence) and the loss on the first copy against the second. mlm: masked-token top-1 accuracy beside the
most-frequent-token baseline. dates: exact-match accuracy (greedy and beam), and
the cross-attention head that best looks at the source's month while the
decoder writes the month digits. classifier: top-1 and top-3 accuracy on held-out
definitions beside the commonest-category baseline.
--data FILE: dates: one "input<TAB>expected" a line; classifier: one "definition<TAB>category"
a line; text models: one sentence a line.
--write stores the result under "evaluation" in the model's metrics.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from experiments import copying
from analysis import induction
from analysis.alignment import MONTH_DIGIT_ROWS, month_span
from model import api
from model import tokenizer as tok
from model.checkpoint import CheckpointError
from training import batches, categories, corpus, dates

README_PROMPTS = ["water:", "guitar:", "the act of", "a person who", "The cat sat on the", "He told me that"]


def _text_stream(m: api.LoadedModel, lines: list[str]) -> np.ndarray:
    bos, eos = m.special(tok.BOS), m.special(tok.EOS)
    return np.concatenate([[bos] + e.ids + [eos] for e in m.tokenizer.encode_batch(lines)]).astype(np.int64)


@torch.no_grad()
def evaluate_lm(m: api.LoadedModel, lines: list[str], train_lines: list[str] | None) -> dict:
    stream = _text_stream(m, lines)
    t = m.config.max_len
    total, count = 0.0, 0
    for start in range(0, len(stream) - 1, t * 16):
        chunk = stream[start : start + t * 16 + 1]
        n = (len(chunk) - 1) // t
        if n == 0:
            break
        x = torch.from_numpy(chunk[: n * t]).view(n, t).to(m.device)
        y = torch.from_numpy(chunk[1 : n * t + 1]).view(n, t).to(m.device)
        logits, _ = m.model(x)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), y.reshape(-1), reduction="sum").item()
        count += y.numel()
    result = {"validation_tokens": count, "perplexity": round(float(np.exp(total / count)), 2)}
    if train_lines:
        counts = np.bincount(_text_stream(m, train_lines), minlength=m.tokenizer.get_vocab_size()) + 1.0
        logp = np.log(counts / counts.sum())
        targets = stream[1 : count + 1]
        result["unigram_perplexity"] = round(float(np.exp(-logp[targets].mean())), 2)
    result["previous_token_head"] = _previous_token_head(m, lines[:300])
    result.update(_copying(m))
    result["samples"] = {p: m.generate(p, 12) for p in README_PROMPTS}
    return result


@torch.no_grad()
def _previous_token_head(m: api.LoadedModel, lines: list[str]) -> dict:
    """Mean attention on the token just before, per head, over real sentences."""
    scores = np.zeros((m.config.n_layers, m.config.n_heads))
    n = 0
    for line in lines:
        tr = m.trace(line)
        probs = tr.attention["self"].probs  # (L, H, t, t)
        if probs.shape[-1] < 3:
            continue
        idx = np.arange(1, probs.shape[-1])
        scores += probs[:, :, idx, idx - 1].mean(-1)
        n += 1
    scores /= max(n, 1)
    layer, head = np.unravel_index(scores.argmax(), scores.shape)
    return {"layer": int(layer), "head": int(head), "score": round(float(scores.max()), 3),
            "per_head": np.round(scores, 3).tolist()}


def _copying(m: api.LoadedModel, n: int = 64, length: int = 20) -> dict:
    """Induction score per head (beside the previous-token score on the same input) and the loss on the
    first copy against the second, on n sequences of `length` random words repeated (experiments.copying)."""
    measured = copying.measure(m, n=n, length=length, seed=0)
    layer, head, score = induction.best_head(measured.induction)
    return {
        "induction_head": {"layer": layer, "head": head, "score": round(score, 3), "examples": n,
                           "per_head": np.round(measured.induction, 3).tolist(),
                           "previous_token_per_head": np.round(measured.previous_token, 3).tolist()},
        "copying": {"sequences": n, "words": length, "first_copy_loss": round(measured.first_loss, 3),
                    "second_copy_loss": round(measured.second_loss, 3)},
    }


@torch.no_grad()
def evaluate_mlm(m: api.LoadedModel, lines: list[str], train_lines: list[str] | None, seed: int = 0) -> dict:
    """Mask 15% of the non-special tokens of each window with <mask>; top-1 accuracy there."""
    stream = _text_stream(m, lines)
    t = m.config.max_len
    gen = np.random.default_rng(seed)
    n_special = len(tok.SPECIALS)
    mask_id = m.special(tok.MASK)
    correct = total = 0
    predictions = []
    for start in range(0, len(stream) - t, t * 16):
        chunk = stream[start : start + t * 16]
        n = len(chunk) // t
        x = torch.from_numpy(chunk[: n * t]).view(n, t)
        picked = torch.from_numpy(gen.random(x.shape) < 0.15) & (x >= n_special)
        inputs = x.masked_fill(picked, mask_id).to(m.device)
        logits, _ = m.model(inputs)
        guess = logits.argmax(-1).cpu()
        correct += int((guess[picked] == x[picked]).sum())
        total += int(picked.sum())
        predictions.append(guess[picked])
    result = {"masked_tokens": total, "top1_accuracy": round(correct / max(total, 1), 4)}
    if train_lines:
        train_stream = _text_stream(m, train_lines)
        most_common = Counter(train_stream[train_stream >= n_special].tolist()).most_common(1)[0][0]
        masked_truth = []
        gen = np.random.default_rng(seed)
        for start in range(0, len(stream) - t, t * 16):
            chunk = stream[start : start + t * 16]
            n = len(chunk) // t
            x = torch.from_numpy(chunk[: n * t]).view(n, t)
            picked = torch.from_numpy(gen.random(x.shape) < 0.15) & (x >= n_special)
            masked_truth.append(x[picked])
        truth = torch.cat(masked_truth)
        result["most_frequent_token"] = m.label(most_common)
        result["most_frequent_token_accuracy"] = round(float((truth == most_common).float().mean()), 4)
    result["samples"] = {s: [w for w, _ in m.fill(s, 3)[0]] for s in
                         ["The cat sat on the <mask>.", "a <mask> of water", "the act of <mask> something"]}
    return result


@torch.no_grad()
def greedy_batch(m: api.LoadedModel, sources: list[str], max_new: int = 12) -> list[str]:
    """Greedy decoding of many dates at once (the same as api.translate, batched)."""
    special = dict(bos=m.special(tok.BOS), eos=m.special(tok.EOS), pad=m.special(tok.PAD))
    src, keep, _, _ = batches.encode_dates([(s, "") for s in sources], m.tokenizer, **special)
    src, keep = src.to(m.device), keep.to(m.device)
    memory = m.model.encode(src, keep)
    out = torch.full((len(sources), 1), special["bos"], device=m.device)
    for _ in range(max_new):
        nxt = m.model.decode(out, memory, keep)[:, -1].argmax(-1, keepdim=True)
        out = torch.cat([out, nxt], 1)
    texts = []
    for row in out[:, 1:].tolist():
        row = row[: row.index(special["eos"])] if special["eos"] in row else row
        texts.append(m.tokenizer.decode(row))
    return texts


@torch.no_grad()
def month_alignment(m: api.LoadedModel, sources: list[str], outputs: list[str]) -> dict:
    """Per cross-attention head: the share of examples where, for both month-digit rows,
    the most-attended source character lies inside the month (name or number)."""
    special = dict(bos=m.special(tok.BOS), eos=m.special(tok.EOS), pad=m.special(tok.PAD))
    spans = [month_span(s) for s in sources]
    keep_idx = [i for i, (sp, o) in enumerate(zip(spans, outputs)) if sp is not None and len(o) == 10]
    hits = np.zeros((m.config.n_decoder_layers, m.config.n_heads))
    for start in range(0, len(keep_idx), 256):
        idx = keep_idx[start : start + 256]
        src, keep, dec_in, _ = batches.encode_dates([(sources[i], outputs[i]) for i in idx], m.tokenizer, **special)
        _, rec = m.model(src.to(m.device), dec_in.to(m.device), keep.to(m.device), record=True)
        for layer, r in enumerate(rec.layers["cross"]):
            probs = r.probs.float().cpu()  # (b, h, t, s)
            strongest = probs[:, :, list(MONTH_DIGIT_ROWS), :].argmax(-1).numpy()  # (b, h, 2)
            lo = np.array([spans[i][0] for i in idx])[:, None, None]
            hi = np.array([spans[i][1] for i in idx])[:, None, None]
            inside = ((strongest >= lo) & (strongest < hi)).all(-1)  # (b, h)
            hits[layer] += inside.sum(0)
    scores = hits / max(len(keep_idx), 1)
    layer, head = np.unravel_index(scores.argmax(), scores.shape)
    return {"layer": int(layer), "head": int(head), "score": round(float(scores.max()), 4),
            "examples": len(keep_idx), "per_head": np.round(scores, 4).tolist()}


def evaluate_dates(m: api.LoadedModel, pairs: list[tuple[str, str]], beam: int = 3) -> dict:
    sources = [s for s, _ in pairs]
    outputs = greedy_batch(m, sources)
    exact = float(np.mean([o == e for o, (_, e) in zip(outputs, pairs)]))
    wrong = [(s, e, o) for o, (s, e) in zip(outputs, pairs) if o != e]
    result = {"examples": len(pairs), "exact_match": round(exact, 4), "errors": wrong[:10]}
    sample = pairs[:200]
    beam_exact = np.mean([m.translate(s, beam=beam) == e for s, e in sample])
    result[f"exact_match_beam{beam}_first200"] = round(float(beam_exact), 4)
    result["best_cross_head"] = month_alignment(m, sources, outputs)
    return result


# Lecture examples in the glosses' style, each with the category a reader would give it (the app offers them).
CLASSIFIER_EXAMPLES = [
    ("a large grey animal with a long trunk", "noun.animal"),
    ("a tool with a heavy head used for driving nails", "noun.artifact"),
    ("a person who writes poems", "noun.person"),
    ("a sweet yellow fruit with a thick skin", "noun.food"),
    ("move quickly on foot", "verb.motion"),
    ("express in words", "verb.communication"),
    ("having a pleasant taste", "adj.all"),
]


@torch.no_grad()
def classify_batch(m: api.LoadedModel, texts: list[str], batch_size: int = 256) -> np.ndarray:
    """(n, c) category probabilities of many texts at once (the same as api.classify, batched)."""
    pad = m.special(tok.PAD)
    out = []
    for start in range(0, len(texts), batch_size):
        ids, keep = batches.padded([m.encode(t).ids for t in texts[start : start + batch_size]], pad)
        logits, _ = m.model(ids.to(m.device), keep=keep.to(m.device))
        out.append(torch.softmax(logits.float(), -1).cpu().numpy())
    return np.concatenate(out)


def evaluate_classifier(m: api.LoadedModel, glosses: list, train_glosses: list | None) -> dict:
    """Top-1 and top-3 accuracy on held-out definitions, beside always guessing the commonest category."""
    labels = list(m.config.labels)
    truth = np.array([labels.index(g.category) for g in glosses])
    probs = classify_batch(m, [g.definition for g in glosses])
    ranked = np.argsort(-probs, axis=1)
    result = {"examples": len(glosses), "pooling": m.config.pooling,
              "top1_accuracy": round(float((ranked[:, 0] == truth).mean()), 4),
              "top3_accuracy": round(float((ranked[:, :3] == truth[:, None]).any(1).mean()), 4)}
    if train_glosses:
        commonest, _ = categories.majority(train_glosses)
        result["majority_category"] = commonest
        result["majority_accuracy"] = round(float((truth == labels.index(commonest)).mean()), 4)
    per_pos = {}
    for pos in ("noun", "verb", "adj", "adv"):
        rows = np.array([g.category.startswith(pos) for g in glosses])
        if rows.any():
            per_pos[pos] = round(float((ranked[rows, 0] == truth[rows]).mean()), 4)
    result["top1_by_part_of_speech"] = per_pos
    confusions = Counter((labels[t], labels[p]) for t, p in zip(truth, ranked[:, 0]) if t != p)
    result["commonest_confusions"] = [f"{t} -> {p}: {n}" for (t, p), n in confusions.most_common(8)]
    result["lecture_examples"] = {text: m.classify(text, 1)[0][0] for text, _ in CLASSIFIER_EXAMPLES}
    return result


def run(name: str, data: Path | None = None, assets: Path = api.ASSETS, directory: Path | None = None) -> dict:
    m = api.load_from(directory, name) if directory else api.load(name, assets=assets)
    if m.arch == "classifier":
        if data:  # one "definition<TAB>category" a line
            rows = [line.split("\t", 1) for line in Path(data).read_text().splitlines() if "\t" in line]
            given = [categories.Gloss("", "", c.strip(), d.strip()) for d, c in rows]
            return {"data": str(data), **evaluate_classifier(m, given, None)}
        train_glosses, val_glosses = categories.split(categories.read_glosses())
        return {"data": "held-out WordNet definitions (synsets never seen in training)",
                **evaluate_classifier(m, val_glosses, train_glosses)}
    if name == "dates":
        if data:
            pairs = [tuple(line.split("\t", 1)) for line in Path(data).read_text().splitlines() if "\t" in line]
            pairs = [(s, e.strip()) for s, e in pairs]
            return {"data": str(data), **evaluate_dates(m, pairs)}
        result = {"data": "validation split (2000 dates never seen in training)",
                  **evaluate_dates(m, dates.pairs(2000, split="validation", seed=1))}
        independent = evaluate_dates(m, dates.independent_examples())
        result["independent_examples"] = {k: independent[k] for k in ("examples", "exact_match", "errors")}
        return result
    if data:
        lines, train_lines, source = Path(data).read_text().splitlines(), None, str(data)
    else:
        train_lines, lines = corpus.split(corpus.read_lines())
        source = "validation split of the WordNet corpus"
    evaluate = evaluate_lm if name == "lm" else evaluate_mlm
    return {"data": source, **evaluate(m, [l for l in lines if l.strip()], train_lines)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", choices=["lm", "mlm", "dates", "classifier"])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--dir", type=Path, help="evaluate the model in this folder instead of assets/<name> "
                        "(e.g. a pooling variant trained with --out)")
    parser.add_argument("--write", action="store_true", help="store the result in the model's metrics.json")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    try:
        result = run(args.name, args.data, directory=args.dir)
    except (CheckpointError, FileNotFoundError, ValueError) as e:
        sys.exit(f"error: {e}")
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.write:
        path = (args.dir or api.ASSETS / args.name) / "metrics.json"
        metrics = json.loads(path.read_text()) if path.is_file() else {}
        metrics["evaluation"] = result
        path.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
