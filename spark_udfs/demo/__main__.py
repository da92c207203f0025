"""``python -m spark_udfs.demo``: the story of ``make run`` (see :mod:`spark_udfs.demo.story`)."""

import sys

from spark_udfs.demo.story import main

sys.exit(main())
