"""mapwatch's store: map pages -> SQLite with history, and the queries on it."""
