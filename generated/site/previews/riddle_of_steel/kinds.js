window.rulesdslPreviews("riddle_of_steel/kinds.html", {});
