// SPDX-License-Identifier: MIT
// Run the flame graph's inline script (gcsprof report -f svg) under node
// in a minimal DOM made from the document's elements, and drive it as a
// user would: zoom on a frame, search, clear, reset. Reads one JSON
// object on stdin ({script, elements, zoom, term}); prints what the
// script did as JSON. Used by svg-check.py; no packages needed.
'use strict';
let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
	const job = JSON.parse(input);
	const listeners = { svg: {}, doc: {} };
	const byId = {};
	const make = (e, parent) => {
		const node = {
			tag: e.tag, attrs: Object.assign({}, e.attrs), style: {}, textContent: e.text || '',
			parentNode: parent, children: [],
			getAttribute(k) { return k in this.attrs ? String(this.attrs[k]) : null; },
			setAttribute(k, v) { this.attrs[k] = String(v); },
			getElementsByTagName(t) {
				const out = [];
				const walk = (n) => n.children.forEach((c) => { if (c.tag === t) out.push(c); walk(c); });
				walk(this);
				return out;
			},
		};
		node.children = (e.children || []).map((c) => make(c, node));
		if (node.attrs.id)
			byId[node.attrs.id] = node;
		return node;
	};
	const root = make(job.root, null);
	root.addEventListener = (type, fn) => { listeners.svg[type] = fn; };
	global.document = {
		documentElement: root,
		getElementById: (id) => byId[id] || null,
		getElementsByTagName: (t) => root.getElementsByTagName(t),
		addEventListener: (type, fn) => { listeners.doc[type] = fn; },
	};
	// The script runs as the document loads.
	new Function(job.script)();
	const frames = root.getElementsByTagName('g').filter((g) => g.getAttribute('class') === 'f');
	const snapshot = () => frames.map((g) => ({
		s: +g.attrs['data-s'], c: +g.attrs['data-c'], d: +g.attrs['data-d'],
		x: +g.children[1].attrs.x, width: +g.children[1].attrs.width,
		fill: g.children[1].attrs.fill, display: g.style.display || '',
		opacity: g.style.opacity || '', label: g.children[2].textContent,
	}));
	const click = (node) => listeners.svg.click({ target: node });
	const key = (k) => listeners.doc.keydown({ key: k, preventDefault() {} });
	const out = {};
	const target = frames.find((g) => +g.attrs['data-s'] === job.zoom.s &&
		+g.attrs['data-d'] === job.zoom.d);
	listeners.svg.mouseover({ target: target.children[1] });
	out.details = byId.details.textContent;
	click(target.children[2]);
	out.zoomed = snapshot();
	out.reset_shown = byId.reset.style.display !== 'none';
	key('/');
	for (const ch of job.term)
		key(ch);
	out.matched = byId.matched.textContent;
	out.searching = snapshot();
	out.box = byId['search-text'].textContent;
	key('Escape');
	out.cleared = byId.matched.textContent;
	click(byId.reset);
	out.unzoomed = snapshot();
	out.reset_hidden = byId.reset.style.display === 'none';
	process.stdout.write(JSON.stringify(out));
});
