"""``python -m encoder_lib.grading.teacher.class_report``: ``make report``."""

import sys

from . import main

sys.exit(main())
