import sys

from rulesdsl.tools.cli import main

sys.exit(main())
