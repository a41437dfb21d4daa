// Panel types and their renderers (pure): each type has exactly one renderer, as the server's
// validator requires (crates/dashboard/src/state.rs, PanelType::renderer). The editor offers
// only these pairs: choosing a type sets its renderer.

/** The types in the order the editor lists them, with their words and their one renderer. */
export const PANEL_TYPES = [
  { type: 'candlestick', label: 'Candles', renderer: 'lightweight-charts' },
  { type: 'line', label: 'Line', renderer: 'lightweight-charts' },
  { type: 'area', label: 'Area', renderer: 'lightweight-charts' },
  { type: 'bar', label: 'Bar', renderer: 'echarts' },
  { type: 'heatmap', label: 'Heatmap', renderer: 'echarts' },
  { type: 'pie', label: 'Pie', renderer: 'echarts' },
  { type: 'radar', label: 'Radar', renderer: 'echarts' },
  { type: 'scatter', label: 'Scatter', renderer: 'echarts' },
  { type: 'table', label: 'Table', renderer: 'custom' },
  { type: 'feed', label: 'Feed', renderer: 'custom' },
  { type: 'metric_card', label: 'Metric cards', renderer: 'custom' },
];

/** What each renderer is called on screen. */
export const RENDERER_LABEL = {
  'lightweight-charts': 'TradingView Lightweight Charts',
  echarts: 'Apache ECharts',
  custom: 'Built-in HTML',
};

/** The renderer `type` must use, or undefined for an unknown type. */
export function rendererOf(type) {
  return PANEL_TYPES.find((t) => t.type === type)?.renderer;
}

/**
 * The panel with another type and that type's renderer. Config keys are kept (the renderers
 * ignore keys they do not know); an unknown type leaves the panel as it is.
 */
export function withType(panel, type) {
  const renderer = rendererOf(type);
  if (!renderer) return panel;
  return { ...panel, type, renderer };
}
