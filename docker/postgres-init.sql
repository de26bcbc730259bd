-- Temporal keeps its own databases (temporal, temporal_visibility), created by its auto-setup as this role.
CREATE ROLE temporal WITH LOGIN PASSWORD 'temporal' CREATEDB;
