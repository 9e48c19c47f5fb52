ALTER TABLE "nodes" ADD COLUMN "lat" double precision;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "lon" double precision;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "location_label" text;