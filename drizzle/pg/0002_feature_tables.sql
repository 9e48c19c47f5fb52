CREATE TABLE "alert_rules" (
	"name" text PRIMARY KEY NOT NULL,
	"definition" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "artifact_chunks" (
	"sha256" text NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "artifact_chunks_sha256_seq_pk" PRIMARY KEY("sha256","seq")
);
--> statement-breakpoint
CREATE TABLE "artifact_sightings" (
	"id" text PRIMARY KEY NOT NULL,
	"sha256" text NOT NULL,
	"node_id" text NOT NULL,
	"pot_id" text,
	"source" text,
	"session" text,
	"url" text,
	"filename" text,
	"truncated" integer NOT NULL,
	"seen_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"sha256" text PRIMARY KEY NOT NULL,
	"size" bigint NOT NULL,
	"mime" text,
	"ext" text,
	"stored" integer NOT NULL,
	"first_seen" bigint NOT NULL,
	"last_seen" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_addresses" (
	"ip" text PRIMARY KEY NOT NULL,
	"country" text,
	"asn" integer,
	"as_org" text,
	"first_seen" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "outputs" (
	"name" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"definition" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reader_positions" (
	"reader" text PRIMARY KEY NOT NULL,
	"position" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rule_seen" (
	"rule" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "rule_seen_rule_value_pk" PRIMARY KEY("rule","value")
);
--> statement-breakpoint
CREATE TABLE "session_recordings" (
	"node_id" text NOT NULL,
	"pot_id" text NOT NULL,
	"session" text NOT NULL,
	"size" integer NOT NULL,
	"sha256" text NOT NULL,
	"data" "bytea" NOT NULL,
	"received_at" bigint NOT NULL,
	CONSTRAINT "session_recordings_node_id_pot_id_session_pk" PRIMARY KEY("node_id","pot_id","session")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"source_id" integer NOT NULL,
	"session" text NOT NULL,
	"src_ip" text,
	"start_ts" bigint NOT NULL,
	"end_ts" bigint NOT NULL,
	"first_event_id" bigint NOT NULL,
	"last_event_id" bigint NOT NULL,
	"events" integer NOT NULL,
	"login_success" integer DEFAULT 0 NOT NULL,
	"username" text,
	"password" text,
	"commands" integer DEFAULT 0 NOT NULL,
	"files" integer DEFAULT 0 NOT NULL,
	"ttylog" integer DEFAULT 0 NOT NULL,
	"closed" integer DEFAULT 0 NOT NULL,
	"segs" text NOT NULL,
	CONSTRAINT "sessions_natural" UNIQUE("source_id","session")
);
--> statement-breakpoint
CREATE INDEX "artifact_sightings_sha256" ON "artifact_sightings" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "artifact_sightings_session" ON "artifact_sightings" USING btree ("session");--> statement-breakpoint
CREATE INDEX "event_addresses_country" ON "event_addresses" USING btree ("country");--> statement-breakpoint
CREATE INDEX "event_addresses_asn" ON "event_addresses" USING btree ("asn");--> statement-breakpoint
CREATE INDEX "sessions_start" ON "sessions" USING btree ("start_ts");--> statement-breakpoint
CREATE INDEX "sessions_login" ON "sessions" USING btree ("id") WHERE login_success = 1;--> statement-breakpoint
CREATE INDEX "sessions_commands" ON "sessions" USING btree ("id") WHERE commands > 0;--> statement-breakpoint
CREATE INDEX "sessions_files" ON "sessions" USING btree ("id") WHERE files > 0;