"""Write the lab's tiny random-weight Llama and its word-level tokenizer into a folder.

Run with the lab's vLLM environment (it imports torch, transformers and tokenizers, which
relplan itself never needs): ``python make_model.py OUT_DIR``. The weights are random (seeded),
so the model's text is noise; what matters for the lab is that vLLM serves it with the real
scheduler, KV cache, prefix cache and metrics. Shape: hidden 768, 6 layers, 12 query heads and
4 KV heads (head_dim 64, which vLLM's CPU attention needs), vocabulary 2048 (8 special tokens,
the words relplan drill's prompts are made of, given in WORDS_FILE, and w0, w1, ... to fill),
about 38 M parameters, 76 MB in bfloat16.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

VOCAB = 2048
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>", "<r4>", "<r5>", "<r6>", "<r7>"]


def vocabulary(words: list[str]) -> dict[str, int]:
    """The word-level vocabulary: the special tokens, then `words` (relplan drill's prompt
    words, so each is its own token: were they `<unk>`, every prompt of one length would be
    the same tokens and the prefix cache would serve it), then w0, w1, ... up to VOCAB."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for w in words:
        if w and w not in vocab and len(vocab) < VOCAB and not any(c.isspace() for c in w):
            vocab[w] = len(vocab)
    i = 0
    while len(vocab) < VOCAB:
        if f"w{i}" not in vocab:
            vocab[f"w{i}"] = len(vocab)
        i += 1
    return vocab


def write_tokenizer(out: Path, words: list[str]) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = vocabulary(words)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        model_max_length=8192,
    )
    # A plain chat template, so /v1/chat/completions works too.
    fast.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    fast.save_pretrained(out)


def write_model(out: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=768,
        intermediate_size=2048,
        num_hidden_layers=6,
        num_attention_heads=12,
        num_key_value_heads=4,
        max_position_embeddings=8192,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=3,
        tie_word_embeddings=True,
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: make_model.py OUT_DIR [WORDS_FILE]", file=sys.stderr)
        return 2
    out = Path(argv[0])
    words = Path(argv[1]).read_text(encoding="utf-8").split() if len(argv) == 2 else []
    out.mkdir(parents=True, exist_ok=True)
    write_tokenizer(out, words)
    write_model(out)
    (out / "relplan-lab.json").write_text(
        json.dumps({"vocab": VOCAB, "words": VOCAB - len(SPECIALS), "prompt_words": words})
    )
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
