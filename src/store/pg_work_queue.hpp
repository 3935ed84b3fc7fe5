// The work queue of shared searches on a PostgreSQL store (docs/fleet.md "Shared searches"):
// the searches and work_items tables of schema 3, on a connection of its own, so a worker's
// long evaluation never holds the store's connection.
#pragma once

#include <memory>

#include "store/pg_schema.hpp"
#include "tunekit/store.hpp"
#include "tunekit/work_queue.hpp"

namespace tunekit::detail {

std::unique_ptr<WorkQueue> make_pg_work_queue(PgLocation where, const StoreOptions& options);

}  // namespace tunekit::detail
