--
-- PostgreSQL database dump
--

\restrict pJOZ7UnSH9Yd1B1NAXFxDbDinhoFcsfnIECumV0mQ2vwmOpKnHK3sgSruREK5jw

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

INSERT INTO release_schema.stored_events VALUES ('b99c4ade-07c6-573f-a295-34833c10bc68', 2, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a206f7073203a79222c226167656e745f6964223a22206f707320222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22676f616c5f6368616e676564222c226163746f725f74797065223a2273797374656d222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383430303030302c227265636f726465645f61745f6d73223a313739383731383430303030302c2273756d6d617279223a22676f616c2063726561746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a367d', 16);
INSERT INTO release_schema.stored_events VALUES ('875964f7-c81d-5bf4-9ac6-f16463e16119', 1, 'store.pruned.v3', '\x7b226375746f666673223a7b2261745f6d73223a313739383731383430303030302c226f636375727265645f6265666f72655f6d73223a313739363132363430303030302c227468726f7567685f73657175656e6365223a302c22637572736f72735f757064617465645f6265666f72655f6d73223a313739363132363430303030307d2c2273657373696f6e73223a5b7b2273657373696f6e5f6b6579223a226167656e743a20203a7a222c226167656e745f6964223a222020222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a66616c73652c2268656164223a342c227072756e65645f7468726f756768223a342c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a206f7073203a79222c226167656e745f6964223a22206f707320222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a362c227072756e65645f7468726f756768223a302c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a6d61696e222c226167656e745f6964223a224d61696e222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a302c227072756e65645f7468726f756768223a302c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a7375626167656e743a6b6964222c226167656e745f6964223a224d61696e222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a226167656e743a4d61696e3a6d61696e222c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a312c227072756e65645f7468726f756768223a312c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a776f726b6572222c226167656e745f6964223a224d61696e222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a332c227072756e65645f7468726f756768223a332c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a6d79206167656e743a78222c226167656e745f6964223a226d79206167656e74222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a302c227072756e65645f7468726f756768223a302c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a226167656e743a6f70733a6d61696e222c226167656e745f6964223a226f7073222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a747275652c2268656164223a302c227072756e65645f7468726f756768223a302c226d657461223a6e756c6c7d2c7b2273657373696f6e5f6b6579223a22676c6f62616c222c226167656e745f6964223a224d61696e222c226b6e6f776e223a747275652c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a226d61696e222c22737061776e65645f6279223a6e756c6c2c22706172656e745f73657373696f6e5f6b6579223a6e756c6c2c2272656769737465726564223a66616c73652c2268656164223a352c227072756e65645f7468726f756768223a352c226d657461223a6e756c6c7d5d2c22637572736f7273223a5b7b2277617463686572223a226167656e743a4d61696e3a6d61696e222c227461726765745f6b6579223a226167656e743a4d61696e3a776f726b6572222c227461726765745f6167656e745f6964223a224d61696e222c226c6173745f7365656e223a332c226e6f746966696564223a332c226d6174657269616c223a332c22757064617465645f61745f6d73223a313739383731383430303030307d2c7b2277617463686572223a226167656e743a4d61696e3a6d61696e222c227461726765745f6b6579223a226167656e743a6d79206167656e743a78222c227461726765745f6167656e745f6964223a226d79206167656e74222c226c6173745f7365656e223a302c226e6f746966696564223a302c226d6174657269616c223a302c22757064617465645f61745f6d73223a313739383731383430303030307d2c7b2277617463686572223a226167656e743a6f70733a6d61696e222c227461726765745f6b6579223a226167656e743a206f7073203a79222c227461726765745f6167656e745f6964223a22206f707320222c226c6173745f7365656e223a302c226e6f746966696564223a362c226d6174657269616c223a362c22757064617465645f61745f6d73223a313739383731383430303030307d5d2c226c696e6b73223a5b7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a776f726b6572222c226167656e745f6964223a224d61696e222c22736f75726365223a7b22636174616c6f675f6964223a22636c617564652d636f6465222c22686f73745f6964223a226c6170746f70222c227468726561645f6964223a22742d31222c22757073747265616d5f6b696e64223a22636c617564652d636f6465222c22757073747265616d5f726566223a7b2270617468223a222f686f6d652f6465762f2e636c617564652f70726f6a656374732f6170702f742d312e6a736f6e6c227d7d2c226d61726b6572223a7b226f6666736574223a307d2c226c696e6b5f76657273696f6e223a312c22616374697665223a747275652c226c6173745f7363616e6e65645f61745f6d73223a6e756c6c2c22637265617465645f61745f6d73223a313739363034303030303030302c22757064617465645f61745f6d73223a313739363034303030303030307d5d7d', 17);
INSERT INTO release_schema.stored_events VALUES ('6041a03d-92f5-5890-93bd-1efb745e0e87', 4, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a776f726b6572222c226167656e745f6964223a224d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22676f616c5f6368616e676564222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a22616c696365222c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383730303030302c227265636f726465645f61745f6d73223a313739383731383730303030302c2273756d6d617279223a22676f616c2075706461746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a377d', 18);
INSERT INTO release_schema.stored_events VALUES ('693a51a1-6cd3-57f5-ab4f-6685c86c3ac5', 2, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a6d79206167656e743a78222c226167656e745f6964223a226d79206167656e74222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2268756d616e5f6469726563745f6d657373616765222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383730303030302c227265636f726465645f61745f6d73223a313739383731383730303030302c2273756d6d617279223a2268756d616e206d6573736167652076696120736c61636b222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a387d', 19);
INSERT INTO release_schema.stored_events VALUES ('b99c4ade-07c6-573f-a295-34833c10bc68', 3, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a206f7073203a79222c226167656e745f6964223a22206f707320222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22676f616c5f6368616e676564222c226163746f725f74797065223a2273797374656d222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383730303030302c227265636f726465645f61745f6d73223a313739383731383730303030302c2273756d6d617279223a22676f616c2075706461746564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a397d', 20);
INSERT INTO release_schema.stored_events VALUES ('25711c9f-108a-553f-8528-c11aa6b8ddd2', 3, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a4d61696e3a7375626167656e743a6b6964222c226167656e745f6964223a224d61696e222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a2268756d616e5f6469726563745f6d657373616765222c226163746f725f74797065223a2268756d616e222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383730303030302c227265636f726465645f61745f6d73223a313739383731383730303030302c2273756d6d617279223a2268756d616e206d657373616765207669612074656c656772616d222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b226167656e743a4d61696e3a6d61696e225d2c2273657175656e6365223a31307d', 21);
INSERT INTO release_schema.stored_events VALUES ('e36f33cf-28ec-5578-b62f-1ebe10de0de9', 2, 'cursor.notice_acknowledged.v1', '\x7b2277617463686572223a226167656e743a6f70733a6d61696e222c227461726765745f6b6579223a226167656e743a206f7073203a79222c227461726765745f6167656e745f6964223a22206f707320222c2261745f6d73223a313739383731383730303030302c226c6173745f7365656e223a362c226e6f746966696564223a397d', 22);
INSERT INTO release_schema.stored_events VALUES ('b99c4ade-07c6-573f-a295-34833c10bc68', 4, 'session.signal_recorded.v1', '\x7b2273657373696f6e5f6b6579223a226167656e743a206f7073203a79222c226167656e745f6964223a22206f707320222c2273657373696f6e5f6964223a6e756c6c2c226b696e64223a22676f616c5f6368616e676564222c226163746f725f74797065223a2273797374656d222c226163746f725f6964223a6e756c6c2c2272756e5f6964223a6e756c6c2c226f636375727265645f61745f6d73223a313739383731383730303030302c227265636f726465645f61745f6d73223a313739383731383730303030302c2273756d6d617279223a22676f616c20636c6561726564222c227061796c6f6164223a6e756c6c2c226465647570655f6b6579223a6e756c6c2c227761746368657273223a5b5d2c2273657175656e6365223a31317d', 23);


--
-- Data for Name: sw_cursors; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_cursors VALUES ('agent:Main:worker', 'Main', 'agent:Main:main', 'Main', 3, 7, 7, 1798718700000);
INSERT INTO release_schema.sw_cursors VALUES ('agent:my agent:x', 'my agent', 'agent:Main:main', 'Main', 0, 8, 8, 1798718700000);
INSERT INTO release_schema.sw_cursors VALUES ('agent:Main:subagent:kid', 'Main', 'agent:Main:main', 'Main', 0, 10, 10, 1798718700000);
INSERT INTO release_schema.sw_cursors VALUES ('agent: ops :y', ' ops ', 'agent:ops:main', 'ops', 6, 9, 11, 1798718700000);


--
-- Data for Name: sw_meta; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_meta VALUES ('schema_version', 2);
INSERT INTO release_schema.sw_meta VALUES ('last_prune_ms', 1798718400000);
INSERT INTO release_schema.sw_meta VALUES ('sequence', 11);


--
-- Data for Name: sw_sessions; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_sessions VALUES ('agent:Main:main', 'Main', NULL, 'main', NULL, NULL, 1, 0, 0, 1, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:ops:main', 'ops', NULL, 'main', NULL, NULL, 1, 0, 0, 1, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:  :z', '  ', NULL, 'main', NULL, NULL, 0, 4, 4, 1, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('global', 'Main', NULL, 'main', NULL, NULL, 0, 5, 5, 1, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:Main:worker', 'Main', NULL, 'main', NULL, NULL, 1, 7, 3, 4, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:my agent:x', 'my agent', NULL, 'main', NULL, NULL, 1, 8, 0, 2, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent:Main:subagent:kid', 'Main', NULL, 'main', 'agent:Main:main', NULL, 1, 10, 1, 3, NULL);
INSERT INTO release_schema.sw_sessions VALUES ('agent: ops :y', ' ops ', NULL, 'main', NULL, NULL, 1, 11, 0, 4, NULL);


--
-- Data for Name: sw_signals; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_signals VALUES (6, 'agent: ops :y', ' ops ', NULL, 'goal_changed', 'system', NULL, NULL, 1798718400000, 1798718400000, 'goal created', NULL, NULL, NULL, 16);
INSERT INTO release_schema.sw_signals VALUES (7, 'agent:Main:worker', 'Main', NULL, 'goal_changed', 'human', 'alice', NULL, 1798718700000, 1798718700000, 'goal updated', NULL, NULL, NULL, 18);
INSERT INTO release_schema.sw_signals VALUES (8, 'agent:my agent:x', 'my agent', NULL, 'human_direct_message', 'human', NULL, NULL, 1798718700000, 1798718700000, 'human message via slack', NULL, NULL, NULL, 19);
INSERT INTO release_schema.sw_signals VALUES (9, 'agent: ops :y', ' ops ', NULL, 'goal_changed', 'system', NULL, NULL, 1798718700000, 1798718700000, 'goal updated', NULL, NULL, NULL, 20);
INSERT INTO release_schema.sw_signals VALUES (10, 'agent:Main:subagent:kid', 'Main', NULL, 'human_direct_message', 'human', NULL, NULL, 1798718700000, 1798718700000, 'human message via telegram', NULL, NULL, '["agent:Main:main"]', 21);
INSERT INTO release_schema.sw_signals VALUES (11, 'agent: ops :y', ' ops ', NULL, 'goal_changed', 'system', NULL, NULL, 1798718700000, 1798718700000, 'goal cleared', NULL, NULL, NULL, 23);


--
-- Data for Name: sw_streams; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_streams VALUES ('4261ef34-36ed-5d0e-9f23-12b103b937e2', 1);
INSERT INTO release_schema.sw_streams VALUES ('87ea66d8-03b4-5633-94b8-76a39f401c20', 1);
INSERT INTO release_schema.sw_streams VALUES ('af8e662f-a2d8-5490-be28-0379bcee457a', 1);
INSERT INTO release_schema.sw_streams VALUES ('875964f7-c81d-5bf4-9ac6-f16463e16119', 1);
INSERT INTO release_schema.sw_streams VALUES ('e36f33cf-28ec-5578-b62f-1ebe10de0de9', 2);


--
-- Data for Name: sw_upstream_links; Type: TABLE DATA; Schema: release_schema; Owner: -
--

INSERT INTO release_schema.sw_upstream_links VALUES ('agent:Main:worker', 'Main', 'claude-code', 'laptop', 't-1', 'claude-code', '{"path":"/home/dev/.claude/projects/app/t-1.jsonl"}', '{"offset":0}', 1, 1, NULL, 1796040000000, 1796040000000);


--
-- Name: stored_events_notification_id_seq; Type: SEQUENCE SET; Schema: release_schema; Owner: -
--

SELECT pg_catalog.setval('release_schema.stored_events_notification_id_seq', 23, true);


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

\unrestrict pJOZ7UnSH9Yd1B1NAXFxDbDinhoFcsfnIECumV0mQ2vwmOpKnHK3sgSruREK5jw

