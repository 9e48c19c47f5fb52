CREATE TABLE "event_keys" (
	"key" bigint PRIMARY KEY NOT NULL,
	"ts" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "event_keys_ts" ON "event_keys" USING brin ("ts");--> statement-breakpoint
ALTER TABLE "event_sources" ADD CONSTRAINT "event_sources_natural" UNIQUE NULLS NOT DISTINCT("node_id","pot_id","pot_type");