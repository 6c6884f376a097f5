-- What a connector is made of beyond its URL: a REST connector's operations (read from its OpenAPI document when the
-- operator created it; they are its tools), the tools a custom MCP server listed then (shown in its specifications;
-- the surfaces list the server live), and where a registry connector came from ({registry, server, version}).
alter table connectors add column operations jsonb not null default '[]';
alter table connectors add column source jsonb;
