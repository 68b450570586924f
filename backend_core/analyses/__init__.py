"""The analyses tier: what a lowering means, read from its stages and its program. `preflight/` predicts
where the target would abort or give wrong values, `numerics/` and `accuracy/` measure the int8 program
against float, `repro/` reduces a failing pass to a small file, `report/` and `graph_layout/` turn a
lowering into JSON, HTML and laid-out graphs."""
