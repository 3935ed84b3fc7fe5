// The attention block as a stack workload: operator, graph and application decisions
// (attention/attention_stack.hpp).
#include "attention/attention_stack.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

// What every candidate of the block runs on: the block's arguments and its intermediates.
class BlockWorkspace : public stack::Workspace {
 public:
  virtual AttentionArgs& args() = 0;
  virtual AttentionWorkspace& scratch() = 0;
  std::vector<OutputView> outputs() override { return {OutputView::of(args().y)}; }
};

// Intermediates recycled between trials: each trial gets fresh inputs and outputs, and warm
// intermediates (every path writes them before it reads them), as the caller's own workspace
// is warm after its first call; a trial timed on freshly faulted pages would rank page
// faults, not plans.
class WarmScratch {
 public:
  std::unique_ptr<AttentionWorkspace> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return std::make_unique<AttentionWorkspace>();
    std::unique_ptr<AttentionWorkspace> w = std::move(free_.back());
    free_.pop_back();
    return w;
  }
  void give(std::unique_ptr<AttentionWorkspace> w) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(w));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<AttentionWorkspace>> free_;
};

// One trial's workspace: a copy of the pristine inputs, zeroed outputs, recycled scratch.
class TrialWorkspace final : public BlockWorkspace {
 public:
  TrialWorkspace(const AttentionArgs& pristine, std::shared_ptr<WarmScratch> pool)
      : args_(pristine), pool_(std::move(pool)), scratch_(pool_->take()) {}
  ~TrialWorkspace() override { pool_->give(std::move(scratch_)); }
  AttentionArgs& args() override { return args_; }
  AttentionWorkspace& scratch() override { return *scratch_; }

 private:
  AttentionArgs args_;
  std::shared_ptr<WarmScratch> pool_;
  std::unique_ptr<AttentionWorkspace> scratch_;
};

// The caller's request: its own arguments, this stack's scratch.
class RequestWorkspace final : public BlockWorkspace {
 public:
  RequestWorkspace(AttentionArgs& args, AttentionWorkspace& scratch)
      : args_(args), scratch_(scratch) {}
  AttentionArgs& args() override { return args_; }
  AttentionWorkspace& scratch() override { return scratch_; }

 private:
  AttentionArgs& args_;
  AttentionWorkspace& scratch_;
};

BlockWorkspace& block(stack::Workspace& ws) {
  auto* b = dynamic_cast<BlockWorkspace*>(&ws);
  if (!b) throw UsageError("attention stack: a workspace that is not the block's");
  return *b;
}

std::size_t field(std::string_view text, std::string_view name, std::size_t value) {
  if (value == 0)
    throw UsageError("attention shape: '" + std::string(text) + "' has no " + std::string(name) +
                     "; write tokens=2048,d=512 (heads=8 optional)");
  return value;
}

}  // namespace

AttentionShape parse_attention_shape(std::string_view text) {
  AttentionShape s;
  s.heads = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view part = text.substr(at, comma - at);
    const std::size_t eq = part.find('=');
    const std::string_view name = part.substr(0, eq);
    std::size_t* slot = name == "tokens"  ? &s.tokens
                        : name == "d"     ? &s.d
                        : name == "heads" ? &s.heads
                                          : nullptr;
    if (!slot || eq == std::string_view::npos)
      throw UsageError("attention shape: '" + std::string(part) +
                       "' is not tokens=N, d=N or heads=N; write e.g. tokens=2048,d=512");
    const std::string number(part.substr(eq + 1));
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != number.size() || number.empty() || number[0] == '-' || v == 0 || v > (1ull << 32))
      throw UsageError("attention shape: " + std::string(name) + "=" + number +
                       " is not a positive whole number");
    *slot = static_cast<std::size_t>(v);
    at = comma + 1;
  }
  if (s.heads == 0) s.heads = 8;
  field(text, "tokens", s.tokens), field(text, "d", s.d);
  check_attention_shape(s.tokens, s.d, s.heads);
  return s;
}

std::string to_string(const AttentionShape& shape) {
  return "tokens=" + std::to_string(shape.tokens) + ",d=" + std::to_string(shape.d) +
         ",heads=" + std::to_string(shape.heads);
}

stack::StackSummary summarize(const AttentionDecision& decision) {
  stack::StackSummary s;
  s.workload = "attention";
  s.shape = to_string(decision.shape);
  s.operators = decision.operators;
  s.levels.push_back(
      {decision.graph, decision.graph_report, "attention_block", stack::Scope::graph});
  s.levels.push_back({decision.application, decision.application_report, "attention_block.plan",
                      stack::Scope::application});
  s.plan = to_string(decision.plan);
  return s;
}

struct AttentionStack::Impl {
  Impl(Tuner& t, stack::StackController& c, cpu::ThreadPool& p, AttentionShape s)
      : tuner(t),
        controller(c),
        pool(p),
        shape(s),
        rmsnorm(make_rmsnorm_op_typed(p)),
        sgemm(make_sgemm_op_typed(p)),
        softmax(make_softmax_op_typed(p)),
        pristine(std::make_shared<AttentionArgs>(make_attention_args(s.tokens, s.d, s.heads))),
        warm(std::make_shared<WarmScratch>()) {}

  // The unfused block's steps, in order, with their keys (attention.hpp OpChoices).
  std::vector<stack::Segment> segments() const {
    const std::size_t t = shape.tokens, d = shape.d, hd = d / shape.heads;
    const auto mnk = [&](std::size_t m, std::size_t n, std::size_t k) {
      return sgemm->parse_shape("m=" + std::to_string(m) + ",n=" + std::to_string(n) +
                                ",k=" + std::to_string(k));
    };
    const auto rows = [&](const OpBase& op, std::size_t r, std::size_t c) {
      return op.parse_shape("rows=" + std::to_string(r) + ",cols=" + std::to_string(c));
    };
    return {{"rmsnorm", rmsnorm.get(), rows(*rmsnorm, t, d)},
            {"qkv", sgemm.get(), mnk(t, 3 * d, d)},
            {"scores", sgemm.get(), mnk(t, t, hd)},
            {"softmax", softmax.get(), rows(*softmax, t, t)},
            {"context", sgemm.get(), mnk(t, hd, t)},
            {"out", sgemm.get(), mnk(t, d, d)}};
  }

  // Each step on candidate choices[i] of its op.
  OpChoices choices_of(std::vector<std::size_t> c) const {
    OpChoices ops;
    const auto gemm = [this](std::size_t index) {
      return [op = sgemm.get(), index](SgemmArgs& a) { op->call(index, a); };
    };
    ops.rmsnorm = [op = rmsnorm.get(), index = c.at(0)](RmsnormArgs& a) { op->call(index, a); };
    ops.qkv = gemm(c.at(1));
    ops.scores = gemm(c.at(2));
    ops.softmax = [op = softmax.get(), index = c.at(3)](SoftmaxArgs& a) { op->call(index, a); };
    ops.context = gemm(c.at(4));
    ops.out = gemm(c.at(5));
    return ops;
  }

  stack::StackCandidate plan_candidate(std::string name, AttentionPlan plan, OpChoices ops) {
    stack::StackCandidate c;
    c.name = std::move(name);
    c.run = [this, plan, ops = std::move(ops)](stack::Workspace& ws, std::span<std::byte>) {
      BlockWorkspace& b = block(ws);
      attention_run(plan, pool, b.scratch(), b.args(), ops);
    };
    return c;
  }

  stack::Problem problem(stack::Scope scope, std::string name) const {
    stack::Problem p;
    p.scope = scope;
    p.name = std::move(name);
    p.signature = Key{{"tokens", static_cast<std::int64_t>(shape.tokens)},
                      {"d", static_cast<std::int64_t>(shape.d)},
                      {"heads", static_cast<std::int64_t>(shape.heads)}};
    // Two f32 paths against each other: twice the bound check_attention_output derives for
    // one f32 path against the double reference.
    const double t = static_cast<double>(shape.tokens), d = static_cast<double>(shape.d);
    p.tolerance.abs = 2 * 0x1p-21 * (4.0 + 0.5 * (std::sqrt(d) + std::sqrt(t)));
    p.tolerance.rel = 2 * 0x1p-22;
    p.make_workspace = [pristine = pristine, warm = warm] {
      return std::make_unique<TrialWorkspace>(*pristine, warm);
    };
    return p;
  }

  AttentionPlan base_plan() const {
    AttentionPlan plan;
    plan.threads = static_cast<int>(pool.size());
    return plan;
  }

  stack::Routine routine() {
    stack::Routine r;
    r.problem = problem(stack::Scope::graph, "attention_block");
    r.segments = segments();
    r.run = [this](stack::Workspace& ws, std::span<const std::size_t> c) {
      BlockWorkspace& b = block(ws);
      attention_run(base_plan(), pool, b.scratch(), b.args(), choices_of({c.begin(), c.end()}));
    };
    r.alternatives = [this](std::span<const std::size_t> picks) {
      std::vector<stack::StackCandidate> out;
      for (const auto& [fuse, stream] : {std::pair{false, true}, {true, false}, {true, true}}) {
        AttentionPlan plan = base_plan();
        plan.fuse_norm = fuse, plan.streaming = stream;
        graph_plans[to_string(plan)] = plan;
        out.push_back(
            plan_candidate(to_string(plan), plan, choices_of({picks.begin(), picks.end()})));
      }
      return out;
    };
    return r;
  }

  // The plan a graph-level candidate runs: an alternative's own, else (defaults, composed)
  // the unfused block.
  AttentionPlan graph_plan(const std::string& name) const {
    const auto it = graph_plans.find(name);
    return it == graph_plans.end() ? base_plan() : it->second;
  }

  // Application plans over the graph's pick: heads in parallel, and the streaming blocks.
  void application(const std::vector<std::size_t>& ops) {
    const std::string graph_pick = graph_set.candidates.at(graph.index).name;
    const AttentionPlan base = graph_plan(graph_pick);
    OpChoices choices = choices_of(graph_pick == "defaults" ? defaults : ops);
    app_problem = problem(stack::Scope::application, "attention_block.plan");
    app_problem.depends_on = {controller.dependency(graph_problem, graph_set)};
    app_set = {};
    app_set.candidates.push_back(plan_candidate("as graph: " + graph_pick, base, choices));
    app_set.reference = 0;
    std::vector<AttentionPlan> plans;
    AttentionPlan heads = base;
    heads.heads_parallel = true;
    plans.push_back(heads);
    if (base.streaming) {
      for (const auto& [q, k] :
           {std::pair<std::size_t, std::size_t>{32, 256}, {128, 256}, {64, 128}, {64, 512}}) {
        AttentionPlan p = base;
        p.q_block = q, p.k_block = k;
        plans.push_back(p);
      }
    }
    for (const AttentionPlan& p : plans)
      app_set.candidates.push_back(plan_candidate(to_string(p), p, choices));
    app = controller.select(app_problem, app_set);
    chosen_plan = app.index == 0 ? base : plans.at(app.index - 1);
  }

  Tuner& tuner;
  stack::StackController& controller;
  cpu::ThreadPool& pool;
  AttentionShape shape;
  std::unique_ptr<Op<RmsnormArgs>> rmsnorm;
  std::unique_ptr<Op<SgemmArgs>> sgemm;
  std::unique_ptr<Op<SoftmaxArgs>> softmax;
  std::shared_ptr<const AttentionArgs> pristine;
  std::shared_ptr<WarmScratch> warm;
  AttentionWorkspace request_scratch;

  bool decided = false;
  std::vector<std::size_t> defaults;
  std::map<std::string, AttentionPlan> graph_plans;  // each graph alternative's plan, by name
  stack::Problem graph_problem;
  stack::CandidateSet graph_set;
  stack::Selection graph;
  stack::Problem app_problem;
  stack::CandidateSet app_set;
  stack::Selection app;
  AttentionPlan chosen_plan;
};

AttentionStack::AttentionStack(Tuner& tuner, stack::StackController& controller,
                               cpu::ThreadPool& pool, AttentionShape shape)
    : impl_(std::make_unique<Impl>(tuner, controller, pool, shape)) {}
AttentionStack::~AttentionStack() = default;

AttentionDecision AttentionStack::decide() {
  Impl& m = *impl_;
  AttentionDecision out;
  out.shape = m.shape;
  stack::Composition c = stack::compose(m.tuner, m.controller, m.routine());
  m.defaults.clear();
  std::vector<std::size_t> picks;
  for (const stack::Segment& s : m.segments()) m.defaults.push_back(s.op->default_index(s.key));
  for (const stack::SegmentPick& p : c.picks) picks.push_back(p.index);
  m.graph_problem = std::move(c.problem);
  m.graph_set = std::move(c.set);
  m.graph = c.selection;
  m.application(picks);
  m.decided = true;
  out.operators = std::move(c.picks);
  out.graph = m.graph;
  out.application = m.app;
  out.graph_report = m.controller.report(m.graph_problem, m.graph_set);
  out.application_report = m.controller.report(m.app_problem, m.app_set);
  out.plan = m.chosen_plan;
  return out;
}

void AttentionStack::run(AttentionArgs& args) {
  Impl& m = *impl_;
  if (args.tokens != m.shape.tokens || args.d != m.shape.d || args.heads != m.shape.heads)
    throw UsageError("attention stack: the arguments' shape is not " + to_string(m.shape));
  if (!m.decided) decide();
  RequestWorkspace request(args, m.request_scratch);
  m.controller.try_execute(m.app_problem, m.app_set, request);
}

const stack::Problem& AttentionStack::graph_problem() const {
  return impl_->graph_problem;
}
const stack::CandidateSet& AttentionStack::graph_set() const {
  return impl_->graph_set;
}
const stack::Problem& AttentionStack::application_problem() const {
  return impl_->app_problem;
}
const stack::CandidateSet& AttentionStack::application_set() const {
  return impl_->app_set;
}

}  // namespace tunekit::kernels
