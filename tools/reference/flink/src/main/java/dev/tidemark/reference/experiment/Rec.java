package dev.tidemark.reference.experiment;

/** One record of the two-split experiment: the split it came from and its event time (ms). */
public class Rec {
  public String split;
  public long ts;

  public Rec() {}

  public Rec(String split, long ts) {
    this.split = split;
    this.ts = ts;
  }
}
