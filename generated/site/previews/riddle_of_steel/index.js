window.rulesdslPreviews("riddle_of_steel/index.html", {});
