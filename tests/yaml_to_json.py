"""A YAML document on stdin as JSON on stdout, read with PyYAML (the
library docker-compose and podman-compose read compose files with)."""
import json
import sys

import yaml

json.dump(yaml.safe_load(sys.stdin), sys.stdout)
