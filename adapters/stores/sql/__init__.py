"""What the SQL stores share: schemas, row mapping and the set-based write."""
