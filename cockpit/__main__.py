"""`python -m cockpit` — same as the `cockpit` console script."""

import sys

from cockpit.cli import main

sys.exit(main())
