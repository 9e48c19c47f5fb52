CREATE TABLE "commands" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"command_id" text NOT NULL,
	"node_id" text NOT NULL,
	"name" text NOT NULL,
	"pot_id" text,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"message" text,
	"data" text,
	"source" text NOT NULL,
	"principal" text,
	"remote_addr" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "commands_command_id_unique" UNIQUE("command_id")
);
--> statement-breakpoint
CREATE TABLE "event_counts" (
	"kind" text NOT NULL,
	"bucket" integer NOT NULL,
	"key" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "event_counts_kind_bucket_key_pk" PRIMARY KEY("kind","bucket","key")
);
--> statement-breakpoint
CREATE TABLE "event_counts_daily" (
	"kind" text NOT NULL,
	"day" integer NOT NULL,
	"key" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "event_counts_daily_kind_day_key_pk" PRIMARY KEY("kind","day","key")
);
--> statement-breakpoint
CREATE TABLE "event_meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_segment_keys" (
	"kind" text NOT NULL,
	"value" integer NOT NULL,
	"seg" bigint NOT NULL,
	CONSTRAINT "event_segment_keys_kind_value_seg_pk" PRIMARY KEY("kind","value","seg")
);
--> statement-breakpoint
CREATE TABLE "event_segments" (
	"seg" bigint PRIMARY KEY NOT NULL,
	"min_ts" bigint NOT NULL,
	"max_ts" bigint NOT NULL,
	"count" integer NOT NULL,
	"ip_bloom" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_sources" (
	"id" integer PRIMARY KEY NOT NULL,
	"node_id" text,
	"pot_id" text,
	"pot_type" text
);
--> statement-breakpoint
CREATE TABLE "event_types" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	CONSTRAINT "event_types_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigint NOT NULL,
	"ts" bigint NOT NULL,
	"source_id" integer NOT NULL,
	"type_id" integer NOT NULL,
	"src_ip" text,
	"data" text NOT NULL
) PARTITION BY RANGE ("ts");
--> statement-breakpoint
-- Added by hand (drizzle-kit cannot declare partitioning; see src/db/pg/schema.ts): one
-- partition per UTC day, created by the writer; this one takes an event whose day has no
-- partition of its own (a clock far off), so no insert ever fails for want of one.
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
--> statement-breakpoint
CREATE TABLE "honeypots" (
	"node_id" text NOT NULL,
	"pot_id" text NOT NULL,
	"pot_type" text NOT NULL,
	"status" text NOT NULL,
	"message" text,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "honeypots_node_id_pot_id_pk" PRIMARY KEY("node_id","pot_id")
);
--> statement-breakpoint
CREATE TABLE "node_secrets" (
	"node_id" text PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"control_step" bigint DEFAULT 0 NOT NULL,
	"events_step" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"node_id" text PRIMARY KEY NOT NULL,
	"node_name" text NOT NULL,
	"node_type" text NOT NULL,
	"status" text NOT NULL,
	"address" text,
	"port" integer,
	"registered_at" bigint NOT NULL,
	"last_seen" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "commands_node" ON "commands" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "events_id" ON "events" USING btree ("id");--> statement-breakpoint
CREATE INDEX "events_ts" ON "events" USING brin ("ts");--> statement-breakpoint
CREATE INDEX "honeypots_pot_id" ON "honeypots" USING btree ("pot_id");