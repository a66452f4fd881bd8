// The Workflow DevKit's side of the bench, in its own directive syntax: a workflow of 10 steps,
// each `total + 1`, as Cairn's, DBOS's and Restate's. bench/peers/workflow-devkit.mjs copies this
// file into a temp dir and builds it there with @workflow/builders (the SWC plugin turns the
// directives into a steps bundle and a workflow bundle); it is never imported as is.

async function addOne(total) {
  "use step";
  return total + 1;
}

export async function tenSteps() {
  "use workflow";
  let total = 0;
  for (let i = 0; i < 10; i++) total = await addOne(total);
  return total;
}
