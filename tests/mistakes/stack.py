"""Lesson 06's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('one_set_of_parameters_for_every_layer', '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for _ in layers:
        x = el.encoder_block(x, layers[0], n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    Wrong('encoder_without_the_mask', '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=norm)
    return x
'''),
    Wrong('encoder_every_block_reads_the_input', '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        out = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return out
'''),
    Wrong('encoder_ignores_norm', '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, padding_mask=padding_mask)
    return x
'''),
    # issue 20: told "every block reads the stack's input", which matches it on a stack of two
    Wrong('encoder_skips_the_first_block', '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for i in range(1, len(layers)):
        x = el.encoder_block(x, layers[i], n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
]
