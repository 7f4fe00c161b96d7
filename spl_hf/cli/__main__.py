import sys

from spl_hf.cli import main

sys.exit(main())
