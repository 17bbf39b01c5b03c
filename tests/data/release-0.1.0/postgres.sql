--
-- PostgreSQL database dump
--

\restrict wNMub6eTPltgckQTnv16viPfHh1AP5l96pIkgTWavnI94KGWzfqTekKrLZcfrR1

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: release_schema; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA release_schema;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: stored_events; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.stored_events (
    originator_id uuid NOT NULL,
    originator_version bigint NOT NULL,
    topic text,
    state bytea,
    notification_id bigint NOT NULL
)
WITH (autovacuum_enabled='true', autovacuum_vacuum_threshold='100000000', autovacuum_vacuum_scale_factor='0.5', autovacuum_analyze_threshold='1000', autovacuum_analyze_scale_factor='0.01');


--
-- Name: stored_events_notification_id_seq; Type: SEQUENCE; Schema: release_schema; Owner: -
--

CREATE SEQUENCE release_schema.stored_events_notification_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: stored_events_notification_id_seq; Type: SEQUENCE OWNED BY; Schema: release_schema; Owner: -
--

ALTER SEQUENCE release_schema.stored_events_notification_id_seq OWNED BY release_schema.stored_events.notification_id;


--
-- Name: sw_cursors; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_cursors (
    target_key text NOT NULL COLLATE pg_catalog."C",
    target_agent_id text NOT NULL COLLATE pg_catalog."C",
    watcher text NOT NULL COLLATE pg_catalog."C",
    watcher_agent_id text NOT NULL,
    last_seen bigint NOT NULL,
    notified bigint NOT NULL,
    material bigint NOT NULL,
    updated_at_ms bigint NOT NULL
);


--
-- Name: sw_meta; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_meta (
    name text NOT NULL,
    value bigint NOT NULL
);


--
-- Name: sw_pending_notices; Type: VIEW; Schema: release_schema; Owner: -
--

CREATE VIEW release_schema.sw_pending_notices AS
 SELECT sw_cursors.watcher,
    sw_cursors.target_key,
    sw_cursors.target_agent_id,
    sw_cursors.last_seen
   FROM release_schema.sw_cursors
  WHERE (sw_cursors.notified > sw_cursors.last_seen);


--
-- Name: sw_sessions; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_sessions (
    session_key text NOT NULL COLLATE pg_catalog."C",
    agent_id text NOT NULL COLLATE pg_catalog."C",
    session_id text,
    kind text NOT NULL,
    spawned_by text,
    parent_session_key text,
    registered integer NOT NULL,
    head bigint NOT NULL,
    pruned_through bigint NOT NULL,
    stream_version bigint NOT NULL,
    meta text
);


--
-- Name: sw_signals; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_signals (
    sequence bigint NOT NULL,
    session_key text NOT NULL COLLATE pg_catalog."C",
    agent_id text NOT NULL COLLATE pg_catalog."C",
    session_id text,
    kind text NOT NULL,
    actor_type text NOT NULL,
    actor_id text,
    run_id text,
    occurred_at_ms bigint NOT NULL,
    recorded_at_ms bigint NOT NULL,
    summary text NOT NULL,
    payload text,
    dedupe_key text,
    watchers text,
    notification_id bigint NOT NULL
);


--
-- Name: sw_streams; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_streams (
    stream_id uuid NOT NULL,
    version bigint NOT NULL
);


--
-- Name: sw_upstream_links; Type: TABLE; Schema: release_schema; Owner: -
--

CREATE TABLE release_schema.sw_upstream_links (
    session_key text NOT NULL COLLATE pg_catalog."C",
    agent_id text NOT NULL COLLATE pg_catalog."C",
    catalog_id text NOT NULL,
    host_id text NOT NULL,
    thread_id text NOT NULL,
    upstream_kind text NOT NULL,
    upstream_ref text NOT NULL,
    marker text NOT NULL,
    link_version bigint NOT NULL,
    active integer NOT NULL,
    last_scanned_at_ms bigint,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL
);


--
-- Name: stored_events notification_id; Type: DEFAULT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.stored_events ALTER COLUMN notification_id SET DEFAULT nextval('release_schema.stored_events_notification_id_seq'::regclass);


--
-- Data for Name: stored_events; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.stored_events VALUES ('724e148d-9000-5db9-bc50-6703fb5bcd5c', 1, 'session.upserted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a6d61696e222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c7d', 1);
INSERT INTO release_schema.stored_events VALUES ('118694f6-5ecf-5996-bc0c-619cb9db4ee3', 1, 'session.upserted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a6f7073222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c7d', 2);
INSERT INTO release_schema.stored_events VALUES ('743b112a-4ab7-5eee-9862-82607d7c76bc', 1, 'session.upserted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2267726f7570222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c7d', 3);
INSERT INTO release_schema.stored_events VALUES ('9d7e87e2-800f-5914-bba1-07ec395347f3', 1, 'cursor.watch_registered.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a6d61696e222c227461726765745f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303030303030302c2268656164223a307d', 4);
INSERT INTO release_schema.stored_events VALUES ('0ebfe298-b4b3-5a12-a775-e38b6ce6e575', 1, 'cursor.watch_registered.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a6f7073222c227461726765745f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303030303030302c2268656164223a307d', 5);
INSERT INTO release_schema.stored_events VALUES ('02adbb8f-02c8-5cb9-ac63-593859d17f96', 1, 'cursor.watch_registered.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a6d61696e222c227461726765745f6b6579223a226167656e743a6d61696e3a6f7073222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303030303030302c2268656164223a307d', 6);
INSERT INTO release_schema.stored_events VALUES ('83d5c53b-7ae0-5b03-bbf6-f7ce3da8f010', 1, 'session.upserted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a7375626167656e743a6669786572222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a226167656e743a6d61696e3a6d61696e222c22706172656e745f73657373696f6e5f6b6579223a6e756c6c7d', 7);
INSERT INTO release_schema.stored_events VALUES ('83d5c53b-7ae0-5b03-bbf6-f7ce3da8f010', 2, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a7375626167656e743a6669786572222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226368696c645f737061776e6564222c226163746f725f74797065223a226167656e74222c226163746f725f6964223a226167656e743a6d61696e3a6d61696e222c2272756e5f6964223a2272756e2d31222c226f636375727265645f61745f6d73223a313739363034303030303030302c227265636f726465645f61745f6d73223a313739363034303030303030302c2273756d6d617279223a226368696c642073657373696f6e20737061776e6564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a226368696c642d737061776e65643a72756e2d31222c227761746368657273223a5b5d2c2273657175656e6365223a317d', 8);
INSERT INTO release_schema.stored_events VALUES ('743b112a-4ab7-5eee-9862-82607d7c76bc', 2, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2268756d616e5f6469726563745f6d657373616765222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739363034303030353030302c227265636f726465645f61745f6d73223a313739363034303030353030302c2273756d6d617279223a2268756d616e206d657373616765207669612074656c656772616d222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a2274673a31222c227761746368657273223a5b5d2c2273657175656e6365223a327d', 9);
INSERT INTO release_schema.stored_events VALUES ('118694f6-5ecf-5996-bc0c-619cb9db4ee3', 2, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a6f7073222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22676f616c5f6368616e676564222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a22616c696365222c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739363034303030353030302c227265636f726465645f61745f6d73223a313739363034303030353030302c2273756d6d617279223a22676f616c2075706461746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a337d', 10);
INSERT INTO release_schema.stored_events VALUES ('83d5c53b-7ae0-5b03-bbf6-f7ce3da8f010', 3, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a7375626167656e743a6669786572222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2272756e5f636f6d706c65746564222c226163746f725f74797065223a2273797374656d222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a2272756e2d31222c226f636375727265645f61745f6d73223a313739363034303030353030302c227265636f726465645f61745f6d73223a313739363034303030353030302c2273756d6d617279223a226368696c642072756e20636f6d706c65746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a2272756e2d7465726d696e616c3a72756e2d31222c227761746368657273223a5b5d2c2273657175656e6365223a347d', 11);
INSERT INTO release_schema.stored_events VALUES ('0ebfe298-b4b3-5a12-a775-e38b6ce6e575', 2, 'cursor.notice_acknowledged.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a6f7073222c227461726765745f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303031303030302c226c6173745f7365656e223a322c226e6f746966696564223a327d', 12);
INSERT INTO release_schema.stored_events VALUES ('743b112a-4ab7-5eee-9862-82607d7c76bc', 3, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2268756d616e5f6469726563745f6d657373616765222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739363034303031303030302c227265636f726465645f61745f6d73223a313739363034303031303030302c2273756d6d617279223a2268756d616e206d657373616765207669612074656c656772616d222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a2274673a32222c227761746368657273223a5b5d2c2273657175656e6365223a357d', 13);
INSERT INTO release_schema.stored_events VALUES ('118694f6-5ecf-5996-bc0c-619cb9db4ee3', 3, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a6f7073222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22636f6d706163746564222c226163746f725f74797065223a2273797374656d222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739363034303031303030302c227265636f726465645f61745f6d73223a313739363034303031303030302c2273756d6d617279223a2273657373696f6e20636f6d706163746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a22636f6d7061637465643a636f6d70616374696f6e2d31222c227761746368657273223a5b5d2c2273657175656e6365223a367d', 14);
INSERT INTO release_schema.stored_events VALUES ('02adbb8f-02c8-5cb9-ac63-593859d17f96', 2, 'cursor.watch_removed.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a6d61696e222c227461726765745f6b6579223a226167656e743a6d61696e3a6f7073222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303031303030307d', 15);
INSERT INTO release_schema.stored_events VALUES ('4786986e-ec22-56b6-8b0d-e3168ce59870', 1, 'session.upserted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a73637261746368222c226167656e745f6964223a226d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c7d', 16);
INSERT INTO release_schema.stored_events VALUES ('c8d2979c-1d04-5af4-978b-ab965676bf59', 1, 'cursor.watch_registered.v1', '\x7b2277617463686572223a226167656e743a6d61696e3a73637261746368222c227461726765745f6b6579223a226167656e743a6d61696e3a74656c656772616d3a67726f75703a3432222c227461726765745f6167656e745f6964223a226d61696e222c2261745f6d73223a313739363034303031303030302c2268656164223a357d', 17);
INSERT INTO release_schema.stored_events VALUES ('4786986e-ec22-56b6-8b0d-e3168ce59870', 2, 'session.reset.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a73637261746368222c226167656e745f6964223a226d61696e227d', 18);
INSERT INTO release_schema.stored_events VALUES ('4786986e-ec22-56b6-8b0d-e3168ce59870', 3, 'session.deleted.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d61696e3a73637261746368222c226167656e745f6964223a226d61696e227d', 19);


--
-- Data for Name: sw_cursors; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_cursors VALUES ('agent:main:subagent:fixer', 'main', 'agent:main:main', 'main', 1, 1, 1, 1796040000000);
INSERT INTO release_schema.sw_cursors VALUES ('agent:main:telegram:group:42', 'main', 'agent:main:main', 'main', 0, 2, 5, 1796040010000);
INSERT INTO release_schema.sw_cursors VALUES ('agent:main:telegram:group:42', 'main', 'agent:main:ops', 'main', 2, 5, 5, 1796040010000);


--
-- Data for Name: sw_meta; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_meta VALUES ('schema_version', 2);
INSERT INTO release_schema.sw_meta VALUES ('last_prune_ms', 1796040000000);
INSERT INTO release_schema.sw_meta VALUES ('sequence', 6);


--
-- Data for Name: sw_sessions; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_sessions VALUES ('agent:main:main', 'main', NULL, 'main', NULL, NULL, 1, 0, 0, 1, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:main:subagent:fixer', 'main', NULL, 'main', 'agent:main:main', NULL, 1, 4, 0, 3, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:main:telegram:group:42', 'main', NULL, 'group', NULL, NULL, 1, 5, 0, 3, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:main:ops', 'main', NULL, 'main', NULL, NULL, 1, 6, 0, 3, NULL);


--
-- Data for Name: sw_signals; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_signals VALUES (1, 'agent:main:subagent:fixer', 'main', NULL, 'child_spawned', 'agent', 'agent:main:main', 'run-1', 1796040000000, 1796040000000, 'child session spawned', NULL, 'child-spawned:run-1', NULL, 8);
INSERT INTO release_schema.sw_signals VALUES (2, 'agent:main:telegram:group:42', 'main', NULL, 'human_direct_message', 'human', NULL, NULL, 1796040005000, 1796040005000, 'human message via telegram', NULL, 'tg:1', NULL, 9);
INSERT INTO release_schema.sw_signals VALUES (3, 'agent:main:ops', 'main', NULL, 'goal_changed', 'human', 'alice', NULL, 1796040005000, 1796040005000, 'goal updated', NULL, NULL, NULL, 10);
INSERT INTO release_schema.sw_signals VALUES (4, 'agent:main:subagent:fixer', 'main', NULL, 'run_completed', 'system', NULL, 'run-1', 1796040005000, 1796040005000, 'child run completed', NULL, 'run-terminal:run-1', NULL, 11);
INSERT INTO release_schema.sw_signals VALUES (5, 'agent:main:telegram:group:42', 'main', NULL, 'human_direct_message', 'human', NULL, NULL, 1796040010000, 1796040010000, 'human message via telegram', NULL, 'tg:2', NULL, 13);
INSERT INTO release_schema.sw_signals VALUES (6, 'agent:main:ops', 'main', NULL, 'compacted', 'system', NULL, NULL, 1796040010000, 1796040010000, 'session compacted', NULL, 'compacted:compaction-1', NULL, 14);


--
-- Data for Name: sw_streams; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_streams VALUES ('9d7e87e2-800f-5914-bba1-07ec395347f3', 1);
INSERT INTO release_schema.sw_streams VALUES ('0ebfe298-b4b3-5a12-a775-e38b6ce6e575', 2);
INSERT INTO release_schema.sw_streams VALUES ('02adbb8f-02c8-5cb9-ac63-593859d17f96', 2);
INSERT INTO release_schema.sw_streams VALUES ('c8d2979c-1d04-5af4-978b-ab965676bf59', 1);
INSERT INTO release_schema.sw_streams VALUES ('4786986e-ec22-56b6-8b0d-e3168ce59870', 3);


--
-- Data for Name: sw_upstream_links; Type: TABLE DATA; Schema: release_schema; Owner: -
--



--
-- Name: stored_events_notification_id_seq; Type: SEQUENCE SET; Schema: release_schema; Owner: -
--

SELECT pg_catalog.setval('release_schema.stored_events_notification_id_seq', 19, true);


--
-- Name: stored_events stored_events_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.stored_events
    ADD CONSTRAINT stored_events_pkey PRIMARY KEY (originator_id, originator_version);


--
-- Name: sw_cursors sw_cursors_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_cursors
    ADD CONSTRAINT sw_cursors_pkey PRIMARY KEY (target_key, target_agent_id, watcher);


--
-- Name: sw_meta sw_meta_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_meta
    ADD CONSTRAINT sw_meta_pkey PRIMARY KEY (name);


--
-- Name: sw_sessions sw_sessions_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_sessions
    ADD CONSTRAINT sw_sessions_pkey PRIMARY KEY (session_key, agent_id);


--
-- Name: sw_signals sw_signals_dedupe_key_key; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_signals
    ADD CONSTRAINT sw_signals_dedupe_key_key UNIQUE (dedupe_key);


--
-- Name: sw_signals sw_signals_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_signals
    ADD CONSTRAINT sw_signals_pkey PRIMARY KEY (sequence);


--
-- Name: sw_streams sw_streams_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_streams
    ADD CONSTRAINT sw_streams_pkey PRIMARY KEY (stream_id);


--
-- Name: sw_upstream_links sw_upstream_links_pkey; Type: CONSTRAINT; Schema: release_schema; Owner: -
--

ALTER TABLE ONLY release_schema.sw_upstream_links
    ADD CONSTRAINT sw_upstream_links_pkey PRIMARY KEY (session_key, agent_id);


--
-- Name: stored_events_notification_id_idx; Type: INDEX; Schema: release_schema; Owner: -
--

CREATE UNIQUE INDEX stored_events_notification_id_idx ON release_schema.stored_events USING btree (notification_id);


--
-- Name: sw_cursors_by_watcher; Type: INDEX; Schema: release_schema; Owner: -
--

CREATE INDEX sw_cursors_by_watcher ON release_schema.sw_cursors USING btree (watcher);


--
-- Name: sw_signals_by_age; Type: INDEX; Schema: release_schema; Owner: -
--

CREATE INDEX sw_signals_by_age ON release_schema.sw_signals USING btree (occurred_at_ms);


--
-- Name: sw_signals_by_session; Type: INDEX; Schema: release_schema; Owner: -
--

CREATE INDEX sw_signals_by_session ON release_schema.sw_signals USING btree (session_key, agent_id, sequence);


--
-- PostgreSQL database dump complete
--

\unrestrict wNMub6eTPltgckQTnv16viPfHh1AP5l96pIkgTWavnI94KGWzfqTekKrLZcfrR1

