import sys

from trainwright_lint.cli import main

sys.exit(main())
