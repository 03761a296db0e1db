//===- TestPlanRequest.cpp - Attach a plan request from the command line --===//
//
// Part of the softmax kernel compiler.
//
// A test pass: lit tests ask for a kernel plan's fields on the command line
// instead of writing a #rowred.plan_request into each input. It attaches the
// request to every rowred.softmax, rowred.log_softmax and rowred.map that
// has none, exactly as a user writes it in the input.
//
//===----------------------------------------------------------------------===//

#include "rowred/Dialect/RowRed/IR/RowRedOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::rowred;

namespace {

/// Attaches `#rowred.plan_request<fields>` to every op that can hold one.
struct TestPlanRequestPass
    : PassWrapper<TestPlanRequestPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPlanRequestPass)

  TestPlanRequestPass() = default;
  TestPlanRequestPass(const TestPlanRequestPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "test-rowred-plan-request"; }
  StringRef getDescription() const final {
    return "Attach a #rowred.plan_request with the given fields to every "
           "rowred.softmax, rowred.log_softmax and rowred.map without one";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<RowRedDialect>();
  }

  void runOnOperation() override {
    std::string text = "#rowred.plan_request<" + fields + ">";
    Attribute request = parseAttribute(text, &getContext());
    if (!isa_and_nonnull<PlanRequestAttr>(request)) {
      getOperation().emitError()
          << "fields='" << fields << "' do not make a #rowred.plan_request";
      return signalPassFailure();
    }
    getOperation().walk([&](Operation *op) {
      if ((isa<MapOp>(op) || isHighLevelOp(op)) &&
          !op->hasAttr(kPlanRequestAttrName))
        op->setAttr(kPlanRequestAttrName, request);
    });
  }

  Option<std::string> fields{
      *this, "fields",
      llvm::cl::desc("The request's fields, as written between its < and >: "
                     "'block = 1024, prefetch = stage'")};
};

} // namespace

namespace mlir {
namespace rowred {
namespace test {
/// Registers the test passes of the rowred dialect with the pass registry.
void registerTestPasses() { PassRegistration<TestPlanRequestPass>(); }
} // namespace test
} // namespace rowred
} // namespace mlir
