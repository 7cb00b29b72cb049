"""mapwatch's feeds: Atom feeds of newly added citing papers, published and served."""
