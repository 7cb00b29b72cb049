"""What the open scholarly sources say of the map's papers: arXiv (authors in order,
categories, versions, DOI, journal reference), OpenAlex (author ids, ORCIDs, institutions,
venue) and Semantic Scholar (the sentences that cite a paper, intents, influence). Their
answers are parsed into bounded records (pure: `records`), fetched politely, stored with when
they were fetched, and an enrichment round ties those together (docs/enrichment.md).

store/scholarly may import (mapwatch/layers.py): store/*.py, store/pages, store/database. A
round is handed the papers whose citers it asks for (tracked, team, followed) by its caller."""
