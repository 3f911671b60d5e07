"""What the lessons compute: the numbers behind their tables and widgets, one module per lesson.

The widgets (``encoder_lib.widgets``) only draw these and wire their
controls; a lesson's code cell that prints a table calls the same functions.
Everything here is built from the library's public functions, seeded, and
run with one BLAS thread where it is more than a few products.

- ``attention`` (lesson 01): random queries and keys, weights with the
  scaling on or off, entropy, the largest weight as d_k grows;
- ``feed_forward`` (lesson 03): the hidden layer at four widths, how much of it is silent;
- ``add_norm`` (lesson 04): the fixture block's output rows in four variants;
- ``block`` (lesson 05): the toy block, its steps, padding and word order;
- ``stack`` (lesson 06): the residual stream's scale through a deep stack;
- ``gradients`` (lesson 07): the gradient reaching each block, by depth;
- ``pretrained`` (lesson 08): what all-MiniLM-L6-v2's heads read, its post-norm
  rows, and which sentence vector tells paraphrases apart.
"""

import numpy as np


def rms(a):
    """Root mean square of every entry (float64 accumulation): one number for "how big" an array is."""
    return float(np.sqrt(np.mean(np.square(a, dtype=np.float64))))
