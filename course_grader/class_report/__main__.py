"""``python -m course_grader.class_report``: ``make report``."""

import sys

from . import main

sys.exit(main())
