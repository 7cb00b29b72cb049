"""Questions asked of the database: papers, citers, directions, search and
autocomplete (full-text), graph questions on bounded subgraphs, the feeds' queries,
the citers an export lists (citer_records), and the answer dataclasses they share (types).

store/questions may import (mapwatch/layers.py): store/*.py, store/pages, store/database."""
