import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * A list of `count` rows of one fixed height in a scrolling box, of which only the rows in view (and
 * a few around them) are in the DOM: a 5,000-entry journal costs the same as a 50-entry one, and a
 * streamed batch re-renders only what is visible. `follow` keeps the box at the bottom while it is
 * there, as a live journal grows.
 */
export function WindowedList({
  count,
  rowHeight,
  row,
  label,
  follow = false,
}: {
  count: number;
  rowHeight: number;
  row: (index: number) => ReactNode;
  label: string;
  follow?: boolean;
}) {
  const box = useRef<HTMLOListElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const atBottom = useRef(true);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setView({ top: element.scrollTop, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    const element = box.current;
    if (follow && element && atBottom.current) element.scrollTop = element.scrollHeight;
  }, [count, follow]);
  const overscan = 10;
  const from = Math.max(0, Math.floor(view.top / rowHeight) - overscan);
  const to = Math.min(count, Math.ceil((view.top + view.height) / rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = from; i < to; i++) rows.push(row(i));
  return (
    <ol
      ref={box}
      className="timeline windowed"
      aria-label={label}
      tabIndex={0}
      onScroll={(event) => {
        const element = event.currentTarget;
        atBottom.current = element.scrollTop + element.clientHeight >= element.scrollHeight - rowHeight;
        setView({ top: element.scrollTop, height: element.clientHeight });
      }}
    >
      {/* Spacers keep the scroll height of every row without rendering them (CSSOM sizes, no style attributes in markup). */}
      <li className="window-spacer" aria-hidden="true" ref={(li) => li?.style.setProperty("height", `${from * rowHeight}px`)} />
      {rows}
      <li className="window-spacer" aria-hidden="true" ref={(li) => li?.style.setProperty("height", `${(count - to) * rowHeight}px`)} />
    </ol>
  );
}
