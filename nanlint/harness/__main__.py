import sys

from nanlint.harness.cli import main

sys.exit(main())
