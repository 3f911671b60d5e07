"""The lessons' questions, each asked before the widget that answers it, each answer computed by that widget.

A question is a function of ``look`` (``bank._Look``): it reads the widget's
states and returns an ``Answer``: the key, the state that shows it, and why,
with the numbers the widget shows. ``asks`` registers it under
``<lesson>/<name>``.
"""

import functools

import numpy as np

from .bank import YES_NO, Answer, Question, QuestionError, clear_best, ratio_trend, trend, yes_no

#: Every question, in course order.
QUESTIONS = []


def asks(lesson, widget, name, prompt, *, choices=None, tolerance=0.0, relative=False):
    """Register the decorated ``compute(look) -> Answer`` as the question ``<lesson>/<name>``."""
    def register(compute):
        QUESTIONS.append(Question(f"{lesson}/{name}", lesson, widget, prompt, compute, choices=dict(choices or {}),
                                  tolerance=tolerance, relative=relative))
        return compute
    return register


MOVES = {"rises": "it rises", "falls": "it falls", "stays": "it stays about the same"}

# --- 01 -----------------------------------------------------------------------------------------------------------
ATTENTION = dict(lesson="01_attention", widget="AttentionExplorer")


@asks(**ATTENTION, name="unscaled-largest-weight",
      prompt="With the scaling off, as d_k goes from 4 to 256, what does query 0's largest weight do?",
      choices={"rises": "it rises towards 1: one key takes nearly all", "falls": "it falls towards 1/6: an even "
               "split", "stays": "it stays about the same"})
def _unscaled(look):
    small, large = (look(scale=False, d_k=d, query=0, temperature=1.0) for d in (4, 256))
    return Answer(trend(small["max_weight"], large["max_weight"]),
                  look.full(scale=False, d_k=256, query=0, temperature=1.0),
                  f"Without the 1/sqrt(d_k), the scores' spread grows from {small['score_std']:.1f} to "
                  f"{large['score_std']:.1f}, and the softmax of widely spread scores is nearly one-hot: query 0's "
                  f"largest weight goes from {small['max_weight']:.2f} to {large['max_weight']:.2f}.")


@asks(**ATTENTION, name="temperature",
      prompt="With the scaling on and d_k = 64, raise the temperature from 1 to 4: what does query 0's largest "
             "weight do?", choices=MOVES)
def _temperature(look):
    cool, hot = (look(scale=True, d_k=64, query=0, temperature=t) for t in (1.0, 4.0))
    return Answer(trend(cool["max_weight"], hot["max_weight"]), look.full(scale=True, d_k=64, query=0, temperature=4.0),
                  f"Dividing every score by 4 shrinks the gaps between them, and the softmax of closer scores is "
                  f"more even: the largest weight goes from {cool['max_weight']:.2f} to {hot['max_weight']:.2f} "
                  f"(an even split over 6 keys is 0.17).")


@asks(**ATTENTION, name="spread-ratio", tolerance=0.15, relative=True,
      prompt="At d_k = 64, how many times wider is the spread (std) of the scores with the scaling off than with "
             "it on? (a number)")
def _spread(look):
    off, on = (look(scale=s, d_k=64, temperature=1.0) for s in (False, True))
    ratio = off["score_std"] / on["score_std"]
    return Answer(round(ratio, 2), look.full(scale=False, d_k=64, temperature=1.0),
                  f"The scaling divides every score by sqrt(64) = 8, so the spread is {ratio:.2f} times wider "
                  f"without it ({off['score_std']:.2f} against {on['score_std']:.2f}).")


# --- 02 -----------------------------------------------------------------------------------------------------------
HEADS = dict(lesson="02_multi_head_attention", widget="HeadsExplorer")


def _positions(look, n_heads):
    return {str(i): f"position {i}" for i in range(len(look(n_heads=n_heads, head=0)["mean_weight_per_key"]))}


@asks(**HEADS, name="head-1-reads", prompt="With 2 heads, which key position does head 1 read most, on average "
      "over the queries?")
def _head_one(look):
    state = look(n_heads=2, head=1)
    if len(state["reads_most_keys"]) != 1:
        raise QuestionError(f"head 1 reads positions {state['reads_most_keys']} equally: no one answer")
    weights = ", ".join(f"{w:.2f}" for w in state["mean_weight_per_key"])
    return Answer(str(state["reads_most"]), look.full(n_heads=2, head=1),
                  f"Head 1 uses its own {state['d_head']} columns of x; averaged over the queries, the keys get "
                  f"{weights}: position {state['reads_most']} most.", choices=_positions(look, 2))


@asks(**HEADS, name="columns-per-head", prompt="With 4 heads, how many columns of x does each head attend with? "
      "(a number)")
def _columns(look):
    state = look(n_heads=4, head=0)
    return Answer(state["d_head"], look.full(n_heads=4, head=0),
                  f"The heads share d_model = {4 * state['d_head']} columns: 4 heads get {state['d_head']} each "
                  f"(head 0 reads {_columns_of(state)}).")


def _columns_of(state):
    start, stop = state["columns"]
    return f"column {start}" if stop - start == 1 else f"columns {start} to {stop - 1}"


@asks(**HEADS, name="heads-agree", choices=YES_NO,
      prompt="With 4 heads, do all four read the same key position most?")
def _agree(look):
    most = [set(look(n_heads=4, head=h)["reads_most_keys"]) for h in range(4)]
    common = set.intersection(*most)
    if common and any(len(m) > 1 for m in most):
        raise QuestionError(f"the heads' most-read positions {most} share {common} only through ties")
    said = "; ".join(f"head {h}: {', '.join(map(str, sorted(m)))}" for h, m in enumerate(most))
    return Answer("yes" if common else "no", look.full(n_heads=4, head=0),
                  f"Each head compares its own column of x, so each finds its own position (ties listed): {said}.")


# --- 03 -----------------------------------------------------------------------------------------------------------
FFN = dict(lesson="03_feed_forward", widget="FeedForwardExplorer")


@asks(**FFN, name="relu-zeros", tolerance=0.1,
      prompt="With ReLU and d_ff = 4 x d_model, what share of the hidden values is exactly 0? (a number, 0 to 1)")
def _relu_zeros(look):
    state = look(factor=4, activation="relu")
    return Answer(round(state["frac_zero"], 3), look.full(factor=4, activation="relu"),
                  f"ReLU sets every negative value to 0, and about half of the values before it are negative: "
                  f"{state['n_zero']} of {state['n_values']}, a share of {state['frac_zero']:.2f}.")


@asks(**FFN, name="gelu-zeros", prompt="With GELU at d_ff = 4 x d_model, how many hidden values are exactly 0?",
      choices={"none": "none", "few": "a few (under a tenth)", "half": "about half"})
def _gelu_zeros(look):
    state = look(factor=4, activation="gelu")
    share = state["frac_zero"]
    key = "none" if share == 0 else "few" if share < 0.1 else "half" if 0.35 < share < 0.65 else None
    if key is None:
        raise QuestionError(f"GELU zeroes a share of {share:.2f}: none of the choices")
    return Answer(key, look.full(factor=4, activation="gelu"),
                  f"GELU(x) = x Phi(x) is 0 only at x = 0: {state['n_zero']} values are exactly 0, while "
                  f"{state['frac_negative']:.0%} are small and negative, where ReLU would have made them 0.")


@asks(**FFN, name="relu-width", prompt="With ReLU, as d_ff goes from 1 x to 8 x d_model, what does the share of "
      "hidden values that are exactly 0 do?", choices={"stays": "it stays near one half", "rises": "it rises "
                                                        "towards 1", "falls": "it falls towards 0"})
def _relu_width(look):
    shares = [look(factor=f, activation="relu")["frac_zero"] for f in (1, 2, 4, 8)]
    key = "stays" if all(0.3 < s < 0.7 for s in shares) else "rises" if shares[-1] > 0.8 else \
        "falls" if shares[-1] < 0.2 else None
    if key is None:
        raise QuestionError(f"ReLU's zero shares {shares} fit none of the choices")
    return Answer(key, look.full(factor=8, activation="relu"),
                  f"Each hidden unit's value is a random mix of the inputs, negative about half the time whatever "
                  f"d_ff is: the shares at 1, 2, 4 and 8 x are {', '.join(f'{s:.2f}' for s in shares)}.")


# --- 04 -----------------------------------------------------------------------------------------------------------
ADD_NORM = dict(lesson="04_add_and_norm", widget="AddNormExplorer")


def _distance(state):
    """How far a state's output rows are from mean 0 and variance 1."""
    return max(state["max_abs_mean"], state["max_var_error"])


@asks(**ADD_NORM, name="unit-rows", prompt="With the residual on, which placement gives output rows of mean 0 "
      "and variance 1?", choices={"post": "post-norm", "pre": "pre-norm", "both": "both", "neither": "neither"})
def _unit_rows(look):
    post, pre = (look(norm=n, residual=True) for n in ("post", "pre"))
    unit = {n: yes_no(_distance(s), 1e-3, 0.05) == "yes" for n, s in (("post", post), ("pre", pre))}
    key = "both" if all(unit.values()) else "neither" if not any(unit.values()) else \
        "post" if unit["post"] else "pre"
    return Answer(key, look.full(norm="post" if key == "neither" else key.replace("both", "post"), residual=True),
                  f"Post-norm ends in a layer norm (largest |row mean| {_tiny(post['max_abs_mean'])}); pre-norm ends "
                  f"in the sum x + f(LN(x)), whose rows keep x's scale (largest |row mean| "
                  f"{pre['max_abs_mean']:.2f}, a variance off by up to {pre['max_var_error']:.2f}).")


def _tiny(value):
    """A row statistic in words: "less than 1e-6" where rounding is all there is (its digits move with the machine)."""
    return "less than 1e-6" if value < 1e-6 else f"{value:.2g}"


#: The residual off: (placement, why its rows are, or are not, of mean 0 and variance 1).
NO_RESIDUAL = (
    ("pre", "Without the residual, pre-norm's output is f(LN(x)): the sublayer's output, which no norm follows"),
    ("post", "Post-norm's output is LN(f(x)), a layer norm's output whatever comes in"),
)


def _no_residual(look, norm, reason):
    state = look(norm=norm, residual=False)
    return Answer(yes_no(_distance(state), 1e-3, 0.05), look.full(norm=norm, residual=False),
                  f"{reason}: its largest |row mean| is {_tiny(state['max_abs_mean'])}, its variance off by up to "
                  f"{_tiny(state['max_var_error'])}.")


for _norm, _reason in NO_RESIDUAL:
    asks(**ADD_NORM, name=f"{_norm}-no-residual", choices=YES_NO,
         prompt=f"{_norm.capitalize()}-norm with the residual off: are the output rows of mean 0 and variance 1?"
         )(functools.partial(_no_residual, norm=_norm, reason=_reason))


# --- 05 -----------------------------------------------------------------------------------------------------------
BLOCK = "05_encoder_block"


@asks(BLOCK, "BlockStepExplorer", "pre-norm-output", choices=YES_NO,
      prompt="In a pre-norm block, are the rows of the block's output (its last step) of mean 0 and std 1?")
def _pre_output(look):
    last = look.explorer.controls["step"].max
    state = look(norm="pre", step=last)
    off = max(state["max_abs_row_mean"], abs(state["min_row_std"] - 1), abs(state["max_row_std"] - 1))
    return Answer(yes_no(off, 1e-3, 0.05), look.full(norm="pre", step=last),
                  f"A pre-norm block ends in a sum, x + FFN(LN(x)), not in a norm: its rows' means reach "
                  f"{state['max_abs_row_mean']:.2f} and their std runs from {state['min_row_std']:.2f} to "
                  f"{state['max_row_std']:.2f}.")


@asks(BLOCK, "PaddingExplorer", "unmasked-padding", choices=YES_NO,
      prompt="With the padding mask off, add 3 padding positions: do the real positions' outputs change?")
def _unmasked(look):
    off, on = (look(n_pad=3, use_mask=m) for m in (False, True))
    return Answer(yes_no(-off["max_change"], -1e-2, -1e-6), look.full(n_pad=3, use_mask=False),
                  f"Without the mask the real queries put up to {off['max_weight_on_padding']:.2f} of their weight "
                  f"on the padding, so their outputs move by up to {off['max_change']:.2f}; with the mask, by "
                  f"{_tiny(on['max_change'])}.")


PERMUTE = dict(lesson=BLOCK, widget="PermutationExplorer")


def _shuffled(look, use_pe):
    shuffles = [value for _, value in look.explorer.controls["shuffle"].options][1:]
    return max(look(shuffle=s, use_pe=use_pe)["max_difference"] for s in shuffles), shuffles[0]


@asks(**PERMUTE, name="no-positions", choices=YES_NO,
      prompt="Without positional encoding, shuffle the words: does a word's output change, beyond moving with "
             "the word?")
def _no_positions(look):
    most, first = _shuffled(look, False)
    return Answer(yes_no(-most, -1e-2, -1e-4), look.full(shuffle=first, use_pe=False),
                  f"Attention compares every word with every other, with no idea of where they sit: each word's "
                  f"output only moves with it (differences of {_tiny(most)}: rounding).")


@asks(**PERMUTE, name="with-positions", choices=YES_NO,
      prompt="With positional encoding added, shuffle the words: does a word's output change, beyond moving "
             "with the word?")
def _with_positions(look):
    most, first = _shuffled(look, True)
    return Answer(yes_no(-most, -1e-2, -1e-4), look.full(shuffle=first, use_pe=True),
                  f"Each position now adds its own vector, so a word moved elsewhere is a different input: outputs "
                  f"change by up to {most:.2f}.")


# --- 06 -----------------------------------------------------------------------------------------------------------
STACK = dict(lesson="06_stacking_blocks", widget="StackScaleExplorer")
GROWS = {"rises": "it grows", "falls": "it shrinks", "stays": "it stays about the same"}


@asks(**STACK, name="pre-norm-scale", choices=GROWS,
      prompt="Pre-norm: from a stack of 1 block to 24, what does the residual stream's RMS after the last block do?")
def _pre_scale(look):
    deepest = look.explorer.max_depth
    one, many = (look(norm="pre", depth=d) for d in (1, deepest))
    return Answer(trend(one["rms_pre"], many["rms_pre"]), look.full(norm="pre", depth=deepest),
                  f"Pre-norm only ever adds to the stream (x + f(LN(x))), and nothing scales it back: its RMS "
                  f"goes from {one['rms_pre']:.2f} after 1 block to {many['rms_pre']:.2f} after {deepest}.")


@asks(**STACK, name="post-norm-scale", choices=GROWS,
      prompt="Post-norm: from a stack of 1 block to 24, what does the residual stream's RMS after the last block do?")
def _post_scale(look):
    deepest = look.explorer.max_depth
    one, many = (look(norm="post", depth=d) for d in (1, deepest))
    return Answer(trend(one["rms_post"], many["rms_post"]), look.full(norm="post", depth=deepest),
                  f"Every post-norm block ends in a layer norm with gamma 1 and beta 0: the RMS is "
                  f"{one['rms_post']:.2f} after 1 block and {many['rms_post']:.2f} after {deepest}.")


@asks(**STACK, name="pre-norm-growth", tolerance=0.2, relative=True,
      prompt="After 24 pre-norm blocks, the residual stream's RMS is how many times the input's? (a number)")
def _growth(look):
    deepest = look.explorer.max_depth
    state = look(norm="pre", depth=deepest)
    return Answer(round(state["growth_pre"], 2), look.full(norm="pre", depth=deepest),
                  f"Each block adds a little to the stream: from {state['rms_input']:.2f} to {state['rms_pre']:.2f}, "
                  f"{state['growth_pre']:.2f} times.")


# --- 07 -----------------------------------------------------------------------------------------------------------
GRADIENTS = dict(lesson="07_gradients_and_training", widget="GradientFlowExplorer")
SIZES = {"larger": "larger", "smaller": "smaller", "same": "about the same (within a quarter)"}


def _gradient(look, norm, residual, reason):
    deepest = look.explorer.max_depth
    state = look(norm=norm, residual=residual, depth=deepest)
    return Answer(ratio_trend(state["bottom_over_top"]), look.full(norm=norm, residual=residual, depth=deepest),
                  f"{reason} The widget measures a gradient norm of {state['bottom']:.3g} at block 1 and "
                  f"{state['top']:.3g} at block {deepest}: block 1 gets {state['bottom_over_top']:.3g} times block "
                  f"{deepest}'s.")


#: The three gradient questions: (name, the stack in words, its norm, residuals, why in a sentence).
GRADIENT_QUESTIONS = (
    ("post-norm-depth", "post-norm blocks with residuals", "post", True,
     "With residuals, each block's input reaches the loss along the sum too, not only through the blocks above it."),
    ("pre-norm-depth", "pre-norm blocks with residuals", "pre", True,
     "In pre-norm the residual stream runs untouched from every block to the end: each block's gradient arrives "
     "along it."),
    ("no-residual-depth", "post-norm blocks without residual connections", "post", False,
     "Without residuals, the gradient reaching block 1 has passed back through all the blocks above it, one after "
     "the other."),
)
for _name, _words, _norm, _residual, _reason in GRADIENT_QUESTIONS:
    asks(**GRADIENTS, name=_name, choices=SIZES,
         prompt=f"After 24 {_words}, is the gradient reaching block 1 larger or smaller than the one reaching block 24?"
         )(functools.partial(_gradient, norm=_norm, residual=_residual, reason=_reason))


# --- 08 -----------------------------------------------------------------------------------------------------------
MODEL = "08_inside_a_real_encoder"


def _mean_over_queries(look, layer, head, field, first=0):
    queries = [value for _, value in look.explorer.controls["query"].options][first:]
    return float(np.mean([look(layer=layer, head=head, query=q)[field] for q in queries]))


@asks(MODEL, "AttentionHeadExplorer", "previous-token-head",
      prompt="Which head of layer 1 reads the previous token most, on average over the query tokens? (a head "
             "number, 0 to 11)")
def _previous_head(look):
    heads = look.explorer.controls["head"].max + 1
    scores = {h: _mean_over_queries(look, 1, h, "previous_weight", first=1) for h in range(heads)}
    best = clear_best(scores, 0.1)
    runner = max((h for h in scores if h != best), key=scores.get)
    return Answer(best, look.full(layer=1, head=best),
                  f"Head {best} of layer 1 puts {scores[best]:.2f} of a query's weight on the token before it, on "
                  f"average; the next, head {runner}, {scores[runner]:.2f}.")


@asks(MODEL, "AttentionHeadExplorer", "cls-layer",
      prompt="In which layer do the heads put the most weight on [CLS], on average over heads and query tokens? "
             "(a layer, 1 to 6)")
def _cls_layer(look):
    layers, heads = look.explorer.controls["layer"].max, look.explorer.controls["head"].max + 1
    scores = {k: float(np.mean([_mean_over_queries(look, k, h, "cls_weight") for h in range(heads)]))
              for k in range(1, layers + 1)}
    best = clear_best(scores, 0.05)
    said = ", ".join(f"{scores[k]:.2f}" for k in sorted(scores))
    return Answer(best, look.full(layer=best, head=0),
                  f"On average over heads and queries, layers 1 to {layers} put {said} on [CLS]: layer {best} most.")


SIMILARITY = dict(lesson=MODEL, widget="SimilarityExplorer")


@asks(**SIMILARITY, name="best-sentence-vector",
      prompt="Which sentence vector puts the paraphrases furthest above the unrelated pairs?",
      choices={"mean6": "the mean of the tokens after layer 6 (the model's own)", "cls6": "the [CLS] vector "
               "after layer 6", "mean3": "the mean of the tokens after layer 3"})
def _best_vector(look):
    gaps = {"mean6": look(pooling="mean", layer=6)["gap"], "cls6": look(pooling="cls", layer=6)["gap"],
            "mean3": look(pooling="mean", layer=3)["gap"]}
    best = clear_best(gaps, 0.05)
    return Answer(best, look.full(pooling=best[:-1], layer=int(best[-1])),
                  f"The paraphrases' mean similarity is above the others' by {gaps['mean6']:.2f} for the mean after "
                  f"layer 6, {gaps['cls6']:.2f} for [CLS] after layer 6 and {gaps['mean3']:.2f} for the mean after "
                  f"layer 3: the model was trained to make the first one a sentence vector.")


@asks(**SIMILARITY, name="cls-early-gap", tolerance=0.05,
      prompt="With the [CLS] vector after layer 3, how far above the unrelated pairs' mean similarity is the "
             "paraphrases'? (a number, the gap)")
def _cls_gap(look):
    state = look(pooling="cls", layer=3)
    return Answer(round(state["gap"], 3), look.full(pooling="cls", layer=3),
                  f"Before the last layer, every sentence's [CLS] vector is nearly the same (paraphrases "
                  f"{state['paraphrase_mean']:.3f}, others {state['other_mean']:.3f}): a gap of {state['gap']:.3f}.")


# --- 09 -----------------------------------------------------------------------------------------------------------
MODERN = "09_the_encoder_since_2017"
NORMS = dict(lesson=MODERN, widget="NormExplorer")


@asks(**NORMS, name="rms-norm-mean", tolerance=0.05, prompt="Rows of mean 0 and variance 1, with 2 added to every "
      "entry: what is each row's mean after RMSNorm? (a number)")
def _rms_mean(look):
    state = look(offset=2.0)
    return Answer(round(state["rms_mean"], 3), look.full(offset=2.0, norm="rms"),
                  f"RMSNorm divides a row by its root mean square, here sqrt(1 + 2^2), and takes no mean out: the "
                  f"rows' mean 2 becomes {state['rms_mean']:.2f}. Layer norm's rows have mean "
                  f"{_tiny(state['layer_mean'])}.")


@asks(**NORMS, name="rms-equals-layer-norm", choices=YES_NO,
      prompt="On rows whose mean is already 0, does RMSNorm give what layer norm gives (both without gamma and beta)?")
def _rms_equals(look):
    zero, two = look(offset=0.0), look(offset=2.0)
    return Answer(yes_no(zero["difference"], 1e-6, 1e-2), look.full(offset=0.0, norm="rms"),
                  f"When a row's mean is 0 its mean square is its variance, so the two divide by the same number: "
                  f"they differ by {_tiny(zero['difference'])}. With 2 added to every entry, by up to "
                  f"{two['difference']:.2f}.")


ROPE = dict(lesson=MODERN, widget="RopeExplorer")


@asks(**ROPE, name="rope-shift", choices=YES_NO, prompt="With rotary positions, move both the query and the key 16 "
      "positions on: does the score of query 9 with key 4 change?")
def _rope_shift(look):
    before, after = look(layout="half", shift=0), look(layout="half", shift=16)
    change = abs(after["pair_score"] - before["pair_score"])
    return Answer({"yes": "no", "no": "yes"}[yes_no(change, 1e-6, 1e-3)], look.full(layout="half", shift=16),
                  f"Turning both by 16 more positions turns them alike, and a dot product does not change when "
                  f"both vectors turn by the same angle: {before['pair_score']:+.4f} before, "
                  f"{after['pair_score']:+.4f} after (a change of {_tiny(change)}).")


@asks(**ROPE, name="rope-layouts", choices=YES_NO, prompt="The same query and key vectors in the other layout "
      "(interleaved instead of half): are the scores the same?")
def _rope_layouts(look):
    state = look(layout="half", shift=0)
    return Answer(yes_no(state["layout_difference"], 1e-6, 1e-2), look.full(layout="interleaved", shift=0),
                  f"The layouts turn different pairs of columns at each speed: query 9 with key 4 scores "
                  f"{state['pair_score']:+.3f} in one and {state['other_layout_pair_score']:+.3f} in the other, and "
                  f"the scores differ by up to {state['layout_difference']:.2f}.")


FFNS = dict(lesson=MODERN, widget="GatedFFNExplorer")


@asks(**FFNS, name="gated-width", prompt="With as many weights as the ReLU FFN of 48 hidden units, how many hidden "
      "units does SwiGLU have? (a number)")
def _gated_width(look):
    relu, swiglu = look(kind="relu"), look(kind="swiglu")
    return Answer(swiglu["width"], look.full(kind="swiglu"),
                  f"A plain FFN holds 2 x d_model x d_ff weights, a gated one 3 x d_model x width (its gate is a third "
                  f"matrix): {relu['weights']:,} = 3 x 16 x {swiglu['width']}.")


@asks(**FFNS, name="gated-signs", prompt="Which values can GeGLU's hidden units hold?",
      choices={"none": "never negative, as ReLU's", "small": "slightly negative only, as GELU's (never below "
               "-0.17)", "both": "either sign, negative ones well below -0.17"})
def _gated_signs(look):
    state = look(kind="geglu")
    low = state["lowest"]
    key = "none" if low >= 0 else "small" if low > -0.2 else "both" if low < -0.3 else None
    if key is None:
        raise QuestionError(f"GeGLU's lowest hidden value {low:.3f} is too close to GELU's -0.17 to call")
    return Answer(key, look.full(kind="geglu"),
                  f"GELU(x w_in) is multiplied by x w_gate, which takes either sign: {state['negative_share']:.0%} of "
                  f"the hidden values are negative, down to {low:.2f}.")


PLACES = dict(lesson=MODERN, widget="PlacementExplorer")


@asks(**PLACES, name="peri-norm-depth", choices=SIZES, prompt="After 24 peri-norm blocks, is the gradient reaching "
      "block 1 larger or smaller than the one reaching block 24?")
def _peri_depth(look):
    state = look(norm="peri", depth=24)
    return Answer(ratio_trend(state["bottom_over_top"]), look.full(norm="peri", depth=24),
                  f"As in pre-norm, the residual stream itself is never normalised. In this widget's setting block 1 "
                  f"gets {state['bottom']:.0f}, block 24 {state['top']:.0f}, "
                  f"{state['bottom_over_top']:.2f} times as much.")


MEMORY = dict(lesson=MODERN, widget="MemoryExplorer")


def _memory(look, field, held):
    short, long = look(seq=512, block=128), look(seq=8192, block=128)
    ratio = long[field] / short[field]
    return Answer(round(ratio), look.full(seq=8192, block=128),
                  f"{held}: 16 times the tokens is {ratio:.0f} times the bytes.")


#: The two memory questions: (name, what is measured, its field, what it holds).
MEMORY_QUESTIONS = (
    ("weights-memory", "one layer's attention weights", "full_bytes", "The weights hold heads x seq x seq numbers"),
    ("blockwise-memory", "the scores blockwise attention holds at a time, blocks of 128 keys,", "block_bytes",
     "One block holds heads x seq x 128 scores"),
)
for _name, _what, _field, _held in MEMORY_QUESTIONS:
    asks(**MEMORY, name=_name, prompt=f"From 512 tokens to 8,192 (16 times as many), how many times as many bytes do "
         f"{_what} take? (a number)")(functools.partial(_memory, field=_field, held=_held))


@asks(MODERN, "WindowExplorer", "window-reach", prompt="A window of 4 (2 positions either side) and no global layer: "
      "after how many layers can position 0's output depend on position 10? (a number)")
def _window_reach(look):
    state = look(window=4, global_layers=False)
    return Answer(state["layers_to_10"], look.full(window=4, global_layers=False, layers=state["layers_to_10"]),
                  f"Each local layer reaches 2 positions further: 10 positions take {state['layers_to_10']} layers.")
