//! What Timeline's schema holds: its own objects against foreign ones (triggers, rules, views in
//! place of tables, row-level security, functions and operators, anything its migrations do not
//! make), and the search path every transaction pins.
//!
//! As on SQLite (src/store/sqlite/schema.rs), a database is data, not code: the catalogs are read
//! (which runs none of the objects) before any of Timeline's tables is, and a schema holding
//! anything else is refused. What an administrator may add is data too: indexes on plain columns
//! of Timeline's tables with PostgreSQL's own operator classes, grants, and planner statistics.

use crate::error::Error;

/// The search path of every transaction (`SET LOCAL`, so that a pooler's shared session keeps
/// nothing): PostgreSQL's own functions, operators and types first, so nothing in Timeline's
/// schema can stand in for one Timeline calls, then the schema's tables, and temporary objects
/// last so they shadow nothing.
pub(super) fn pin_search_path(schema: &str) -> String {
    format!(
        "SET LOCAL search_path = pg_catalog, {schema}, pg_temp; {}",
        session_settings()
    )
}

/// The settings every statement runs under, set per transaction (`SET LOCAL`) rather than in the
/// start-up packet, whose `options` parameter poolers such as PgBouncer refuse: each statement is
/// bounded by `STATEMENT_TIMEOUT_MS`, and every execution of a prepared statement is planned for
/// its values and the tables as they are then (`force_custom_plan`): the generic plan PostgreSQL
/// otherwise keeps after five runs is made while a new schema's tables are nearly empty, where a
/// lookup by (timeline, id) through nodes_by_parent (timeline, parent, id) costs the same as
/// through the key; kept for an import or conversion of 100k messages in one transaction, it read
/// the whole timeline per row (quadratic: 100k rows took more than 40 minutes).
pub(super) fn session_settings() -> String {
    format!(
        "SET LOCAL statement_timeout = {}; SET LOCAL plan_cache_mode = force_custom_plan",
        super::connect::STATEMENT_TIMEOUT_MS
    )
}

/// For the migrations only: new tables go to the first schema of the path, so Timeline's comes
/// first while they run (the schema was verified to hold nothing else just before).
pub(super) fn migration_search_path(schema: &str) -> String {
    format!("SET LOCAL search_path = {schema}, pg_catalog, pg_temp")
}

/// Timeline's tables (every schema version).
const TABLES: &[&str] = &[
    "state",
    "timelines",
    "nodes",
    "summary_sources",
    "branches",
    "idempotency",
    "audit",
    "archived_branches",
    "imports",
    "search_docs",
    "search_postings",
];

/// The sequences of Timeline's identity columns.
const SEQUENCES: &[&str] = &[
    "branches_seq_seq",
    "idempotency_seq_seq",
    "audit_seq_seq",
    "archived_branches_seq_seq",
    "imports_seq_seq",
];

/// Timeline's indexes, as `table.index`.
const INDEXES: &[&str] = &[
    "state.state_pkey",
    "timelines.timelines_pkey",
    "nodes.nodes_pkey",
    "nodes.nodes_by_parent",
    "nodes.nodes_by_range_start",
    "nodes.nodes_by_request",
    "summary_sources.summary_sources_pkey",
    "summary_sources.summary_sources_by_source",
    "branches.branches_pkey",
    "branches.branches_timeline_name_key",
    "idempotency.idempotency_pkey",
    "idempotency.idempotency_by_ts",
    "audit.audit_pkey",
    "archived_branches.archived_branches_pkey",
    "archived_branches.archived_branches_by_name",
    "imports.imports_pkey",
    "imports.imports_by_source",
    "imports.imports_by_digest",
    "search_docs.search_docs_pkey",
    "search_postings.search_postings_pkey",
    "nodes.nodes_with_newer_parent",
    "nodes.nodes_pinned",
    "nodes.nodes_by_real_start",
    "nodes.nodes_summaries",
];

/// Timeline's constraints besides NOT NULL, as `table.constraint`.
const CONSTRAINTS: &[&str] = &[
    "state.state_pkey",
    "state.state_id_check",
    "timelines.timelines_pkey",
    "nodes.nodes_pkey",
    "summary_sources.summary_sources_pkey",
    "branches.branches_pkey",
    "branches.branches_timeline_name_key",
    "idempotency.idempotency_pkey",
    "audit.audit_pkey",
    "archived_branches.archived_branches_pkey",
    "imports.imports_pkey",
    "search_docs.search_docs_pkey",
    "search_postings.search_postings_pkey",
];

/// The columns with a default (a constant), as `table.column`.
const DEFAULTS: &[&str] = &[
    "timelines.cold_nodes",
    "timelines.search_docs",
    "timelines.search_terms",
    "nodes.cold",
    "nodes.pinned",
    "nodes.cover_count",
    "nodes.stale",
    "nodes.jump",
    "nodes.path_min_tokens",
];

/// Every column of Timeline's tables, as `table.column`.
const COLUMNS: &[&str] = &[
    "state.id",
    "state.next_timeline",
    "state.schema_version",
    "timelines.id",
    "timelines.next_node",
    "timelines.current_branch",
    "timelines.cold_nodes",
    "timelines.title",
    "timelines.created_at",
    "timelines.updated_at",
    "timelines.search_docs",
    "timelines.search_terms",
    "nodes.timeline",
    "nodes.id",
    "nodes.parent",
    "nodes.role",
    "nodes.text",
    "nodes.tokens",
    "nodes.intent_tag",
    "nodes.intent_note",
    "nodes.summary_kind",
    "nodes.summary_from",
    "nodes.summary_to",
    "nodes.derived_from",
    "nodes.supersedes",
    "nodes.version",
    "nodes.request_digest",
    "nodes.cold",
    "nodes.pinned",
    "nodes.prefix_tokens",
    "nodes.depth",
    "nodes.cover_count",
    "nodes.stale",
    "nodes.superseded_by",
    "nodes.created_at",
    "nodes.provenance",
    "nodes.jump",
    "nodes.path_min_tokens",
    "summary_sources.timeline",
    "summary_sources.summary",
    "summary_sources.source",
    "branches.seq",
    "branches.timeline",
    "branches.name",
    "branches.head",
    "branches.watermark",
    "idempotency.seq",
    "idempotency.scope",
    "idempotency.key",
    "idempotency.op",
    "idempotency.result",
    "idempotency.ts",
    "idempotency.request",
    "audit.seq",
    "audit.ts",
    "audit.entry",
    "archived_branches.seq",
    "archived_branches.timeline",
    "archived_branches.name",
    "archived_branches.head",
    "archived_branches.watermark",
    "archived_branches.position",
    "archived_branches.nodes",
    "imports.seq",
    "imports.format",
    "imports.source_key",
    "imports.digest",
    "imports.timeline",
    "imports.ts",
    "imports.title",
    "imports.record",
    "search_docs.timeline",
    "search_docs.node",
    "search_docs.terms",
    "search_postings.term",
    "search_postings.timeline",
    "search_postings.node",
];

/// A SQL array of names, e.g. `'{a,b}'::pg_catalog.text[]` (the names are Timeline's own, plain
/// lower-case words).
fn array(names: &[&str]) -> String {
    format!("'{{{}}}'::pg_catalog.text[]", names.join(","))
}

/// The one catalog query (no parameters: `schema` is a checked lower-case name) that lists what
/// the schema holds besides Timeline's objects, one row `(kind, name, table)` each (the indexes of
/// a table that is not Timeline's go with it, unnamed). It runs outside
/// any transaction, before the search path is pinned, so every function is qualified and every
/// comparison is between values of one built-in type (PostgreSQL's own operator is then the only
/// exact match, and pg_catalog is searched first).
pub(super) fn foreign_query(schema: &str) -> String {
    let (tables, sequences, indexes) = (array(TABLES), array(SEQUENCES), array(INDEXES));
    let (constraints, defaults, columns) = (array(CONSTRAINTS), array(DEFAULTS), array(COLUMNS));
    let index_names: Vec<&str> = INDEXES
        .iter()
        .map(|i| i.split_once('.').expect("table.index").1)
        .collect();
    let index_names = array(&index_names);
    let class = |name: &str| format!("'pg_catalog.{name}'::pg_catalog.regclass::pg_catalog.oid");
    let (pg_class, pg_attrdef, pg_constraint) = (
        class("pg_class"),
        class("pg_attrdef"),
        class("pg_constraint"),
    );
    let code: Vec<String> = [
        "pg_proc",
        "pg_operator",
        "pg_type",
        "pg_collation",
        "pg_opclass",
        "pg_opfamily",
        "pg_conversion",
        "pg_ts_config",
        "pg_ts_dict",
    ]
    .iter()
    .map(|c| class(c))
    .collect();
    let code = code.join(", ");
    format!(
        "WITH ns AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = '{schema}'::pg_catalog.name), \
         rel AS (SELECT c.oid, c.relname::pg_catalog.text AS name, c.relkind, c.relrowsecurity, c.relforcerowsecurity \
                 FROM pg_catalog.pg_class c, ns WHERE c.relnamespace = ns.oid), \
         tab AS (SELECT oid, name FROM rel WHERE relkind = 'r'::\"char\" AND name = ANY ({tables})) \
         SELECT kind, name, tbl FROM ( \
           SELECT 0 AS ord, '{STATE_ROW}' AS kind, name, NULL AS tbl FROM tab WHERE name = 'state' \
           UNION ALL \
           SELECT 1, CASE r.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view' \
                  WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' WHEN 'S' THEN 'sequence' \
                  WHEN 'c' THEN 'type' ELSE 'index' END, r.name, t.relname::pg_catalog.text \
           FROM rel r LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = r.oid \
                      LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid \
           WHERE NOT ((r.relkind = 'r'::\"char\" AND r.name = ANY ({tables})) \
               OR (r.relkind = 'S'::\"char\" AND r.name = ANY ({sequences})) \
               OR (r.relkind = 'i'::\"char\" AND pg_catalog.format('%s.%s', t.relname, r.name) = ANY ({indexes})) \
               OR (r.relkind = 'i'::\"char\" AND i.indrelid IN (SELECT oid FROM tab) AND i.indexprs IS NULL \
                   AND i.indpred IS NULL AND NOT r.name = ANY ({index_names})) \
               OR (r.relkind = 'i'::\"char\" AND NOT i.indrelid IN (SELECT oid FROM tab))) \
           UNION ALL \
           SELECT 2, CASE WHEN a.attgenerated <> ''::\"char\" THEN 'generated column' ELSE 'column' END, \
                  a.attname::pg_catalog.text, t.name \
           FROM tab t JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid \
           WHERE a.attnum > 0::pg_catalog.int2 AND NOT a.attisdropped \
             AND (a.attgenerated <> ''::\"char\" OR NOT pg_catalog.format('%s.%s', t.name, a.attname) = ANY ({columns})) \
           UNION ALL \
           SELECT 3, 'default', a.attname::pg_catalog.text, t.name \
           FROM tab t JOIN pg_catalog.pg_attrdef d ON d.adrelid = t.oid \
                JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum \
           WHERE NOT pg_catalog.format('%s.%s', t.name, a.attname) = ANY ({defaults}) \
           UNION ALL \
           SELECT 4, 'constraint', c.conname::pg_catalog.text, t.name \
           FROM tab t JOIN pg_catalog.pg_constraint c ON c.conrelid = t.oid \
           WHERE c.contype <> 'n'::\"char\" AND NOT pg_catalog.format('%s.%s', t.name, c.conname) = ANY ({constraints}) \
           UNION ALL \
           SELECT 5, 'trigger', g.tgname::pg_catalog.text, r.name \
           FROM rel r JOIN pg_catalog.pg_trigger g ON g.tgrelid = r.oid WHERE NOT g.tgisinternal \
           UNION ALL \
           SELECT 6, 'rule', w.rulename::pg_catalog.text, r.name \
           FROM rel r JOIN pg_catalog.pg_rewrite w ON w.ev_class = r.oid \
           WHERE NOT (r.relkind IN ('v'::\"char\", 'm'::\"char\") AND w.rulename = '_RETURN'::pg_catalog.name) \
           UNION ALL \
           SELECT 7, 'policy', p.polname::pg_catalog.text, r.name \
           FROM rel r JOIN pg_catalog.pg_policy p ON p.polrelid = r.oid \
           UNION ALL \
           SELECT 8, 'row security', r.name, r.name FROM rel r WHERE r.relrowsecurity OR r.relforcerowsecurity \
           UNION ALL \
           SELECT 9, 'inherits', h.inhrelid::pg_catalog.regclass::pg_catalog.text, t.name \
           FROM tab t JOIN pg_catalog.pg_inherits h ON h.inhparent = t.oid \
           UNION ALL \
           SELECT 9, 'inherits from', h.inhparent::pg_catalog.regclass::pg_catalog.text, t.name \
           FROM tab t JOIN pg_catalog.pg_inherits h ON h.inhrelid = t.oid \
           UNION ALL \
           SELECT 10, CASE p.prokind WHEN 'a' THEN 'aggregate' WHEN 'p' THEN 'procedure' ELSE 'function' END, \
                  pg_catalog.format('%s(%s)', p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid)), NULL \
           FROM pg_catalog.pg_proc p, ns WHERE p.pronamespace = ns.oid \
           UNION ALL \
           SELECT 11, 'operator', pg_catalog.format('%s(%s, %s)', o.oprname, \
                  CASE WHEN o.oprleft = 0::pg_catalog.oid THEN 'NONE' ELSE pg_catalog.format_type(o.oprleft, NULL) END, \
                  pg_catalog.format_type(o.oprright, NULL)), NULL \
           FROM pg_catalog.pg_operator o, ns WHERE o.oprnamespace = ns.oid \
           UNION ALL \
           SELECT 12, CASE y.typtype WHEN 'd' THEN 'domain' ELSE 'type' END, y.typname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_type y, ns WHERE y.typnamespace = ns.oid AND y.typrelid = 0::pg_catalog.oid \
             AND y.typcategory <> 'A'::\"char\" \
           UNION ALL \
           SELECT 13, 'collation', c.collname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_collation c, ns WHERE c.collnamespace = ns.oid \
           UNION ALL \
           SELECT 13, 'operator class', c.opcname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_opclass c, ns WHERE c.opcnamespace = ns.oid \
           UNION ALL \
           SELECT 13, 'operator family', f.opfname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_opfamily f, ns WHERE f.opfnamespace = ns.oid \
           UNION ALL \
           SELECT 13, 'conversion', c.conname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_conversion c, ns WHERE c.connamespace = ns.oid \
           UNION ALL \
           SELECT 13, 'text search configuration', c.cfgname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_ts_config c, ns WHERE c.cfgnamespace = ns.oid \
           UNION ALL \
           SELECT 13, 'text search dictionary', d.dictname::pg_catalog.text, NULL \
           FROM pg_catalog.pg_ts_dict d, ns WHERE d.dictnamespace = ns.oid \
           UNION ALL \
           SELECT 14, 'uses', pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid), \
                  pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid) \
           FROM (SELECT {pg_class} AS classid, oid AS objid FROM tab \
                 UNION ALL \
                 SELECT {pg_class}, i.indexrelid FROM pg_catalog.pg_index i \
                   JOIN rel r ON r.oid = i.indexrelid JOIN tab t ON t.oid = i.indrelid \
                 WHERE pg_catalog.format('%s.%s', t.name, r.name) = ANY ({indexes}) \
                    OR (i.indexprs IS NULL AND i.indpred IS NULL) \
                 UNION ALL \
                 SELECT {pg_attrdef}, a.oid FROM pg_catalog.pg_attrdef a JOIN tab t ON a.adrelid = t.oid \
                 UNION ALL \
                 SELECT {pg_constraint}, c.oid FROM pg_catalog.pg_constraint c JOIN tab t ON c.conrelid = t.oid) m \
           JOIN pg_catalog.pg_depend d ON d.classid = m.classid AND d.objid = m.objid \
           WHERE d.refclassid IN ({code}) \
             AND (pg_catalog.pg_identify_object(d.refclassid, d.refobjid, 0)).schema IS DISTINCT FROM 'pg_catalog'::pg_catalog.text \
         ) found ORDER BY ord, tbl NULLS FIRST, name"
    )
}

/// The `kind` of the first row of `foreign_query` when the schema holds Timeline's `state` table
/// (no object's kind).
pub(super) const STATE_ROW: &str = "timeline state";

/// One object of the schema that Timeline did not make (a row of `foreign_query`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Foreign {
    pub(super) kind: String,
    pub(super) name: String,
    /// The table it belongs to (for `uses`: the object used).
    pub(super) table: Option<String>,
}

impl Foreign {
    /// Whether it is one of Timeline's own names, defined otherwise (a view in place of a table):
    /// only a backup gives the original back.
    fn changed(&self) -> bool {
        let ours = |list: &[&str], name: &str| list.contains(&name);
        match self.kind.as_str() {
            "view" | "materialized view" | "foreign table" | "sequence" | "type" | "table" => {
                ours(TABLES, &self.name) || ours(SEQUENCES, &self.name)
            }
            "index" => INDEXES
                .iter()
                .any(|i| i.split_once('.').is_some_and(|(_, n)| n == self.name)),
            "default" => self
                .table
                .as_deref()
                .is_some_and(|t| COLUMNS.contains(&format!("{t}.{}", self.name).as_str())),
            "uses" => true,
            _ => false,
        }
    }

    /// "trigger copy_texts on nodes", "view nodes (in place of Timeline's table nodes)".
    pub(super) fn describe(&self) -> String {
        let table = self.table.as_deref().unwrap_or("");
        match self.kind.as_str() {
            "uses" => format!("{}, which uses {table},", self.name),
            "column" | "generated column" => {
                format!("{} {} of table {table}", self.kind, self.name)
            }
            "default" => format!("a default of column {} of table {table}", self.name),
            "constraint" => format!("constraint {} on table {table}", self.name),
            "policy" => format!("row-level security policy {} on {table}", self.name),
            "row security" => format!("row-level security on table {table}"),
            "inherits" => format!("table {} (inherits from {table})", self.name),
            "inherits from" => format!("table {table} (inherits from {})", self.name),
            "trigger" | "rule" | "index" => {
                let mut text = format!("{} {} on {table}", self.kind, self.name);
                if self.changed() {
                    text.push_str(" (defined otherwise than Timeline defines it)");
                }
                text
            }
            kind if self.changed() && ours_table(&self.name) => {
                format!(
                    "{kind} {} (in place of Timeline's table {})",
                    self.name, self.name
                )
            }
            kind if self.changed() => {
                format!(
                    "{kind} {} (in place of Timeline's {})",
                    self.name, self.name
                )
            }
            kind => format!("{kind} {}", self.name),
        }
    }

    /// The statement that removes it (psql), when removing it restores Timeline's schema.
    fn drop_statement(&self, schema: &str) -> Option<String> {
        if self.changed() {
            return None;
        }
        let q = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
        let table = self
            .table
            .as_deref()
            .map(|t| format!("{}.{}", q(schema), q(t)));
        let on = table.clone().unwrap_or_default();
        let object = format!("{}.{}", q(schema), q(&self.name));
        Some(match self.kind.as_str() {
            "table" => format!("DROP TABLE {object};"),
            "view" => format!("DROP VIEW {object};"),
            "materialized view" => format!("DROP MATERIALIZED VIEW {object};"),
            "foreign table" => format!("DROP FOREIGN TABLE {object};"),
            "sequence" => format!("DROP SEQUENCE {object};"),
            "type" => format!("DROP TYPE {object};"),
            "domain" => format!("DROP DOMAIN {object};"),
            "collation" => format!("DROP COLLATION {object};"),
            "conversion" => format!("DROP CONVERSION {object};"),
            "text search configuration" => format!("DROP TEXT SEARCH CONFIGURATION {object};"),
            "text search dictionary" => format!("DROP TEXT SEARCH DICTIONARY {object};"),
            "index" => format!("DROP INDEX {object};"),
            "column" | "generated column" => {
                format!("ALTER TABLE {on} DROP COLUMN {};", q(&self.name))
            }
            "default" => format!(
                "ALTER TABLE {on} ALTER COLUMN {} DROP DEFAULT;",
                q(&self.name)
            ),
            "constraint" => format!("ALTER TABLE {on} DROP CONSTRAINT {};", q(&self.name)),
            "trigger" => format!("DROP TRIGGER {} ON {on};", q(&self.name)),
            "rule" => format!("DROP RULE {} ON {on};", q(&self.name)),
            "policy" => format!("DROP POLICY {} ON {on};", q(&self.name)),
            "row security" => {
                format!("ALTER TABLE {on} NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;")
            }
            "inherits" => format!("ALTER TABLE {} NO INHERIT {on};", self.name),
            "inherits from" => format!("ALTER TABLE {on} NO INHERIT {};", self.name),
            // The signature is PostgreSQL's own text (names and types, already quoted as needed).
            "function" => format!("DROP FUNCTION {}.{};", q(schema), self.name),
            "procedure" => format!("DROP PROCEDURE {}.{};", q(schema), self.name),
            "aggregate" => format!("DROP AGGREGATE {}.{};", q(schema), self.name),
            "operator" => format!("DROP OPERATOR {}.{};", q(schema), self.name),
            _ => return None,
        })
    }
}

fn ours_table(name: &str) -> bool {
    TABLES.contains(&name)
}

/// The statements that remove `foreign`, triggers, rules and policies first (they hang on the
/// tables and functions removed after them).
fn drops(schema: &str, foreign: &[Foreign]) -> Vec<String> {
    let order = |f: &Foreign| match f.kind.as_str() {
        "trigger" | "rule" | "policy" | "row security" => 0,
        "view" | "materialized view" => 1,
        "index" | "constraint" | "default" | "column" | "generated column" => 2,
        "inherits" | "inherits from" => 3,
        "function" | "procedure" | "aggregate" | "operator" => 5,
        _ => 4,
    };
    let mut sorted: Vec<&Foreign> = foreign.iter().collect();
    sorted.sort_by_key(|f| order(f));
    sorted
        .into_iter()
        .filter_map(|f| f.drop_statement(schema))
        .collect()
}

/// What `db check` reports of foreign objects: one problem each, with how to remove it (one of
/// Timeline's own objects defined otherwise only a backup gives back).
pub(super) fn foreign_problems(schema: &str, foreign: &[Foreign]) -> Vec<String> {
    foreign
        .iter()
        .map(|f| match f.drop_statement(schema) {
            None => format!(
                "{} is not part of Timeline's schema; restore a backup of the database",
                f.describe()
            ),
            Some(drop) => format!(
                "{} is not part of Timeline's schema (a database is data, not code); remove it with psql ({drop})",
                f.describe()
            ),
        })
        .collect()
}

/// The refusal of a schema that holds objects Timeline did not create.
pub(super) fn foreign_schema(label: &str, schema: &str, foreign: &[Foreign]) -> Error {
    let names: Vec<String> = foreign.iter().map(Foreign::describe).collect();
    let drops = drops(schema, foreign);
    let remove = if drops.is_empty() {
        String::new()
    } else {
        format!(" remove them with psql ({}), or", drops.join(" "))
    };
    Error::database(format!(
        "the database {label} holds objects in its schema {schema} that Timeline did not create: {}. A database is data, not code: a trigger, rule, view or row-level security policy runs whenever the database is read or changed, and any object Timeline did not make can change what its statements do, so Timeline does not use this schema; nothing was read or written. If you added them yourself,{remove} restore a backup of the database you trust (an administrator may add only indexes on columns of Timeline's tables, and grants: see docs/storage.md); otherwise the schema may have been tampered with: keep a copy of it for inspection (pg_dump) and restore a backup",
        names.join(", ")
    ))
}
